// The page's static assets (DECISIONS.md "The page for people": every asset served by the service
// itself). Files in public/ are read once at start, named by a hash of their content and served
// with a year-long immutable cache, gzip-compressed when the client accepts it. public/ is found
// by walking up from this module (src/paths.ts), so the same code works from src/ and from dist/.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { findUp } from '../../paths.js';

export interface Asset {
  /** The URL path, e.g. /assets/page.3f2a9c1b0d.css */
  path: string;
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
};

export const ASSET_FILES = ['page.css', 'page.js', 'icon.svg', 'console.css', 'console.js'] as const;
export type AssetName = (typeof ASSET_FILES)[number];

function load(): { byName: Map<AssetName, Asset>; byPath: Map<string, Asset> } {
  const dir = findUp(import.meta.url, 'public', 'page.js');
  const byName = new Map<AssetName, Asset>();
  const byPath = new Map<string, Asset>();
  for (const name of ASSET_FILES) {
    const body = readFileSync(join(dir, name));
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    const dot = name.lastIndexOf('.');
    const ext = name.slice(dot + 1);
    const asset: Asset = {
      path: `/assets/${name.slice(0, dot)}.${hash}.${ext}`,
      type: TYPES[ext] ?? 'application/octet-stream',
      body,
      gzip: gzipSync(body, { level: 9 }),
      etag: `"${hash}"`,
    };
    byName.set(name, asset);
    byPath.set(asset.path, asset);
  }
  return { byName, byPath };
}

let loaded: ReturnType<typeof load> | null = null;
const assets = () => {
  loaded ??= load();
  return loaded;
};

export const assetPath = (name: AssetName): string => (assets().byName.get(name) as Asset).path;
export const assetAt = (path: string): Asset | undefined => assets().byPath.get(path);

export const acceptsGzip = (header: string | undefined): boolean => /\bgzip\b/i.test(header ?? '');
