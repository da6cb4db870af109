// Several nodes of the service on one store, in this test process: two nodes at once (real
// PostgreSQL: one schema; with REDIS_URL, one Redis prefix), or one node stopped and started
// again on the same data (both backends: the PGlite directory is reused). The one helper for
// multi-node and restart tests; close() stops every node it started and drops the data.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/domain/ports.js';
import { templateDir } from './global-setup.js';
import { startTestServer, type TestServer, usingRealPostgres } from './server.js';

export interface SharedOptions {
  clock?: Clock;
  /** Share the Redis in REDIS_URL (one prefix for every node), so the nodes hear each other. */
  redis?: boolean;
}

export class SharedStore {
  readonly schema = `t_${randomBytes(6).toString('hex')}`;
  readonly dataDir = mkdtempSync(join(tmpdir(), 'commons-shared-'));
  readonly env: Record<string, string>;
  private readonly open = new Set<TestServer>();

  constructor(
    env: Record<string, string> = {},
    private readonly opts: SharedOptions = {},
  ) {
    if (!usingRealPostgres()) cpSync(templateDir(), this.dataDir, { recursive: true });
    const redis: Record<string, string> = opts.redis ? { REDIS_URL: process.env.REDIS_URL as string, REDIS_PREFIX: `${this.schema}:` } : {};
    this.env = { ...redis, ...env };
  }

  /** A node on the shared store (embedded: only one at a time, the directory is PGlite's). */
  async start(env: Record<string, string> = {}): Promise<TestServer> {
    const s = await startTestServer(
      { ...this.env, ...env },
      { schema: this.schema, dataDir: this.dataDir, ...(this.opts.clock ? { clock: this.opts.clock } : {}) },
    );
    this.open.add(s);
    return s;
  }

  /** Stops `node` (a clean stop) and starts another on the same store. */
  async restart(node: TestServer, env: Record<string, string> = {}): Promise<TestServer> {
    await this.stop(node);
    return this.start(env);
  }

  async stop(node: TestServer): Promise<void> {
    if (!this.open.delete(node)) return;
    await node.close();
  }

  /** Stops the nodes still running, drops the schema and removes the directory. */
  async close(): Promise<void> {
    for (const n of [...this.open]) await this.stop(n);
    if (usingRealPostgres()) {
      const postgres = (await import('postgres')).default;
      const sql = postgres(process.env.DATABASE_URL as string, { max: 1, onnotice: () => {} });
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
      await sql.end();
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Two nodes sharing one PostgreSQL schema (and Redis, unless `redis: false`); real PostgreSQL only. */
export async function twoNodes(
  env: Record<string, string> = {},
  opts: SharedOptions = {},
): Promise<{ a: TestServer; b: TestServer; shared: SharedStore; close: () => Promise<void> }> {
  if (!usingRealPostgres()) throw new Error('two nodes at once need the real PostgreSQL (DATABASE_URL)');
  const shared = new SharedStore(env, { redis: Boolean(process.env.REDIS_URL), ...opts });
  try {
    const a = await shared.start();
    const b = await shared.start();
    return { a, b, shared, close: () => shared.close() };
  } catch (err) {
    await shared.close();
    throw err;
  }
}
