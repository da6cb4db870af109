// How the HTML pages and their assets are answered: ETag per content (a matching If-None-Match is
// 304 with no body), gzip when accepted (its own ETag, Vary: Accept-Encoding), and the security
// headers on every page (DECISIONS.md "The page for people").
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { etagMatches } from '../runner/pages.js';
import type { RawResult, Req } from '../runner/route.js';
import { type Asset, acceptsGzip } from './assets.js';
import { securityHeaders } from './html.js';

const HTML = 'text/html; charset=utf-8';

function answer(req: Req, body: Buffer, gz: () => Buffer, tag: string, type: string, extra: Record<string, string>): RawResult {
  const gzip = acceptsGzip(req.headers['accept-encoding']);
  const etag = gzip ? `"${tag}-gz"` : `"${tag}"`;
  const headers: Record<string, string> = { ...extra, etag, vary: extra.vary ? `${extra.vary}, Accept-Encoding` : 'Accept-Encoding' };
  if (etagMatches(req.headers['if-none-match'], etag)) return { status: 304, raw: '', contentType: type, headers };
  if (gzip) headers['content-encoding'] = 'gzip';
  return { raw: gzip ? gz() : body, contentType: type, headers };
}

/** A page: revalidated on every visit (no-cache), so it is fresh yet costs a 304 when unchanged. */
export function htmlAnswer(req: Req, publicUrl: string, html: string, extra: Record<string, string> = {}): RawResult {
  const body = Buffer.from(html, 'utf8');
  const tag = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  return answer(req, body, () => gzipSync(body), tag, HTML, { ...securityHeaders(publicUrl), 'cache-control': 'no-cache', ...extra });
}

/** A content-hashed asset: its name changes with its content, so it may be kept for a year. */
export function assetAnswer(req: Req, a: Asset): RawResult {
  const tag = a.etag.slice(1, -1);
  return answer(req, a.body, () => a.gzip, tag, a.type, {
    'cache-control': 'public, max-age=31536000, immutable',
  });
}
