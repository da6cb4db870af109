// The contract gate's documents and compiled validators as a test file sees them: built once per
// run by global setup (gate-build.ts) and loaded here, synchronously and only when a file first
// checks an answer or a frame, so a file that never talks to the service pays nothing for them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { inject } from 'vitest';

export type Json = Record<string, unknown>;

/** Under node_modules, so the generated modules resolve `ajv` and `ajv-formats` from the project. */
export const GATE_CACHE_DIR = join(import.meta.dirname, '..', '..', 'node_modules', '.cache', 'commons-gate');

export interface HttpResponseEntry {
  /** The media types the document lists for this status. */
  types: string[];
  /** The validator of its JSON body; null when the answer has no JSON body. */
  validator: string | null;
}

export interface GateIndex {
  hash: string;
  http: {
    paths: { template: string; ops: Record<string, Record<string, HttpResponseEntry>> }[];
    errorEnvelope: string;
  };
  stream: { messages: Record<string, string>; eventBranches: Record<string, string> };
}

export interface Validate {
  (data: unknown): boolean;
  errors?: { instancePath?: string; message?: string; params?: unknown }[] | null;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the gate's index.json (gate-build.ts), provided by global setup. */
    gateIndex: string;
  }
}

/** The JSON schema of a response's content: `{}` for JSON without a schema, null without JSON. */
export function jsonSchemaOf(content: Record<string, { schema?: Json }> | undefined): Json | null {
  if (!content) return null;
  const key = Object.keys(content).find((k) => k === 'application/json' || /\+json$/.test(k));
  return key ? (content[key]?.schema ?? {}) : null;
}

interface Loaded {
  index: GateIndex;
  http: Record<string, Validate>;
  stream: Record<string, Validate>;
}
let loaded: Loaded | undefined;

export function gate(): Loaded {
  if (loaded) return loaded;
  const indexFile = inject('gateIndex');
  if (!indexFile) throw new Error('the contract gate was not built: run the tests through vitest (global setup builds it)');
  const dir = join(indexFile, '..');
  const require = createRequire(indexFile);
  loaded = {
    index: JSON.parse(readFileSync(indexFile, 'utf8')) as GateIndex,
    http: require(join(dir, 'http.cjs')) as Record<string, Validate>,
    stream: require(join(dir, 'stream.cjs')) as Record<string, Validate>,
  };
  return loaded;
}
