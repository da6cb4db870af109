// Opens the SQL store: PGlite embedded (served over a unix socket from a worker thread) when no
// DATABASE_URL is given, a real PostgreSQL otherwise. postgres.js is the one driver either way.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import postgres, { type Sql } from 'postgres';

export interface Store {
  sql: Sql;
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

export interface StoreOptions {
  databaseUrl?: string | undefined;
  /** Use (and create) this schema: tests isolate each run in its own. */
  schema?: string | undefined;
  dataDir: string;
}

const quiet = { onnotice: () => {} };

export async function openStore(opts: StoreOptions): Promise<Store> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.schema);
  return openEmbedded(resolve(opts.dataDir, 'pg'));
}

async function openPostgres(url: string, schema: string | undefined): Promise<Store> {
  if (schema) {
    const admin = postgres(url, { max: 1, ...quiet });
    await admin.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`);
    await admin.end();
  }
  const sql = postgres(url, {
    max: 10,
    ...quiet,
    ...(schema ? { connection: { search_path: schema } } : {}),
  });
  return { sql, kind: 'postgres', close: () => sql.end({ timeout: 5 }) };
}

async function openEmbedded(dataDir: string): Promise<Store> {
  mkdirSync(dataDir, { recursive: true });
  // Unix socket paths are limited to ~100 bytes, so the socket lives in a short temp dir.
  const sockDir = mkdtempSync(join(tmpdir(), 'cmn-'));
  const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), {
    workerData: { dataDir, socketPath: join(sockDir, '.s.PGSQL.5432') },
  });
  await new Promise<void>((ok, ko) => {
    worker.once('error', ko);
    worker.once('message', (m: { type: string; message?: string }) =>
      m.type === 'ready' ? ok() : ko(new Error(`PGlite failed to start: ${m.message}`)),
    );
  });
  // PGlite is one database session: a single connection keeps transactions from interleaving.
  const sql = postgres({ host: sockDir, port: 5432, database: 'postgres', username: 'postgres', max: 1, ...quiet });
  return {
    sql,
    kind: 'pglite',
    async close() {
      await sql.end({ timeout: 5 });
      await new Promise<void>((ok) => {
        const timer = setTimeout(ok, 5000);
        worker.once('message', (m: { type: string }) => {
          if (m.type === 'stopped') {
            clearTimeout(timer);
            ok();
          }
        });
        worker.postMessage({ type: 'stop' });
      });
      await worker.terminate();
      rmSync(sockDir, { recursive: true, force: true });
    },
  };
}
