// Starts the real service in-process on 127.0.0.1:0 for a test file: PGlite copied from the
// migrated template by default, or an isolated schema of the real PostgreSQL in DATABASE_URL.

import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type App, startApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { Clock } from '../../src/domain/ports.js';
import type { Logger } from '../../src/log.js';
import { serviceOrigins } from './contract-gate.js';
import { templateDir } from './global-setup.js';

export interface TestServer {
  app: App;
  url: string;
  config: Config;
  call: (method: string, path: string, opts?: CallOpts) => Promise<Answer>;
  close: () => Promise<void>;
}

export interface CallOpts {
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
  raw?: string | Buffer;
}

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience over arbitrary JSON.
  json: any;
  text: string;
}

export const usingRealPostgres = (): boolean => Boolean(process.env.DATABASE_URL);

export async function startTestServer(
  env: Record<string, string> = {},
  opts: { clock?: Clock; backend?: 'pglite' | 'postgres'; schema?: string; dataDir?: string; log?: Logger } = {},
): Promise<TestServer> {
  const backend = opts.backend ?? (usingRealPostgres() ? 'postgres' : 'pglite');
  let dataDir = opts.dataDir;
  let ownsDir = false;
  if (!dataDir) {
    dataDir = mkdtempSync(join(tmpdir(), 'commons-test-'));
    ownsDir = true;
    if (backend === 'pglite') cpSync(templateDir(), dataDir, { recursive: true });
  }
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMITS: 'off',
    ALLOW_PRIVATE_CALLBACKS: '1',
    // Each test server gets its own Redis keys unless a test shares them on purpose.
    REDIS_PREFIX: `t${randomBytes(6).toString('hex')}:`,
    ...(backend === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL ?? '' } : {}),
    ...env,
  });
  if (backend !== 'postgres') config.databaseUrl = undefined;
  if (backend === 'postgres') config.databaseSchema = opts.schema ?? `t_${randomBytes(6).toString('hex')}`;
  const app = await startApp({ config, ...(opts.clock ? { clock: opts.clock } : {}), ...(opts.log ? { log: opts.log } : {}) });
  const url = app.url;
  serviceOrigins.add(new URL(url).origin);
  return {
    app,
    url,
    config,
    call: (method, path, o = {}) => call(url, method, path, o),
    async close() {
      await app.close();
      if (backend === 'postgres' && !opts.schema) {
        const postgres = (await import('postgres')).default;
        const sql = postgres(process.env.DATABASE_URL as string, { max: 1, onnotice: () => {} });
        await sql.unsafe(`DROP SCHEMA IF EXISTS "${config.databaseSchema}" CASCADE`);
        await sql.end();
      }
      if (ownsDir) rmSync(dataDir as string, { recursive: true, force: true });
    },
  };
}

export async function call(base: string, method: string, path: string, o: CallOpts = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let body: string | Buffer | undefined;
  if (o.raw !== undefined) body = o.raw;
  else if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  serviceOrigins.add(new URL(base).origin);
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** Registers an identity and returns its number and token. */
export async function register(s: TestServer, name = 'Agent', extra: Record<string, unknown> = {}, headers?: Record<string, string>) {
  const r = await s.call('POST', '/api/v1/ai/register', {
    body: { name, accepted_principles: true, ...extra },
    ...(headers ? { headers } : {}),
  });
  if (r.status !== 200) throw new Error(`register failed: ${r.status} ${r.text}`);
  return r.json.data as { registration_number: string; api_token: string; invite_code: string };
}

/** A controllable clock for deadline tests. */
export class TestClock implements Clock {
  constructor(private t = Date.now()) {}
  now(): Date {
    return new Date(this.t);
  }
  nowMs(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
}
