// Opens the SQL store: PGlite embedded (served over a unix socket from a worker thread) when no
// DATABASE_URL is given, a real PostgreSQL otherwise. postgres.js is the one driver either way.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import postgres, { type Sql } from 'postgres';
import { guardOneConnection } from './one-connection.js';

export interface Store {
  sql: Sql;
  kind: 'pglite' | 'postgres';
  /** The thread serving the embedded database (fault tests terminate it to prove the exit). */
  worker?: Worker;
  /** Called once the migrations ran: the embedded store, on the start that created its data
   * directory, reopens it so what the migrations touched is returned (src/store/pglite-worker.mjs). */
  settle?(): Promise<void>;
  /** True when it closed cleanly; false when it had to drop what was still running (a wedged
   * store: the process then exits 1, src/main.ts). */
  close(): Promise<boolean>;
}

/** How long closing waits for running statements before it drops them (the whole stop is bounded
 * at 10 s, src/main.ts). */
const CLOSE_WAIT_S = 4;

/** postgres.js waits up to the timeout for running queries, then drops them: a close that took the
 * whole timeout dropped something. */
async function endWithin(sql: Sql): Promise<boolean> {
  const started = Date.now();
  await sql.end({ timeout: CLOSE_WAIT_S });
  return Date.now() - started < CLOSE_WAIT_S * 1000 - 100;
}

/** Deadlines on every database call (DECISIONS.md "Reliability promises"): a stuck lock or a slow
 * statement is cancelled by the server, so no request and no pool connection waits for good. */
export interface Deadlines {
  connectTimeoutS: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

export interface StoreOptions {
  databaseUrl?: string | undefined;
  /** Use (and create) this schema: tests isolate each run in its own. */
  schema?: string | undefined;
  dataDir: string;
  deadlines?: Deadlines | undefined;
  /** Called once when the embedded database's worker dies on its own (the process cannot go on). */
  onLost?: ((err: Error) => void) | undefined;
}

const quiet = { onnotice: () => {} };

export async function openStore(opts: StoreOptions): Promise<Store> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.schema, opts.deadlines);
  return openEmbedded(resolve(opts.dataDir, 'pg'), opts.onLost, backupPointer(opts.dataDir));
}

/** True when DATA_DIR holds no embedded database yet: the next start creates one. */
export const embeddedFresh = (dataDir: string): boolean => !existsSync(join(resolve(dataDir, 'pg'), 'PG_VERSION'));

/** A file in DATA_DIR naming the running server's backup socket (src/store/backup.ts). */
export const backupPointer = (dataDir: string): string => resolve(dataDir, 'backup-socket');

/** Seconds before a lost connection tries again. postgres.js grows this to 20 s after repeated
 * failures, so a database back after an outage would go unused for that long; a short, bounded
 * wait lets the service recover within a second (DECISIONS.md "Reliability promises"). */
export const reconnectBackoff = (attempt: number): number => Math.min(0.05 * attempt, 0.25);

/** Connection options carrying the deadlines (also used by the readiness probe's own client). */
export function deadlineOptions(d: Deadlines | undefined) {
  if (!d) return {};
  return {
    connect_timeout: d.connectTimeoutS,
    backoff: reconnectBackoff,
    connection: {
      statement_timeout: d.statementTimeoutMs,
      lock_timeout: d.lockTimeoutMs,
      // A transaction left open by a vanished client must not hold its locks for good.
      idle_in_transaction_session_timeout: Math.max(5000, d.statementTimeoutMs * 2),
    },
  };
}

async function openPostgres(url: string, schema: string | undefined, deadlines: Deadlines | undefined): Promise<Store> {
  if (schema) {
    const admin = postgres(url, { max: 1, ...quiet, ...(deadlines ? { connect_timeout: deadlines.connectTimeoutS } : {}) });
    await admin.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`);
    await admin.end();
  }
  const d = deadlineOptions(deadlines);
  const sql = postgres(url, {
    max: 10,
    ...quiet,
    ...d,
    connection: { ...('connection' in d ? d.connection : {}), ...(schema ? { search_path: schema } : {}) },
  });
  return { sql: guardOneConnection(sql), kind: 'postgres', close: () => endWithin(sql) };
}

/** A fresh data directory is initialised (initdb) by a child process that exits, so the half
 * gigabyte initdb touches is returned rather than kept by the server's WebAssembly memory
 * (src/store/pglite-worker.mjs). */
async function initialiseEmbedded(dataDir: string, workerUrl: URL): Promise<void> {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  await new Promise<void>((ok, ko) => {
    execFile(process.execPath, [workerUrl.pathname, '--init', dataDir], { maxBuffer: 16 * 2 ** 20 }, (err, _out, stderr) =>
      err ? ko(new Error(`PGlite failed to initialise ${dataDir}: ${stderr.trim() || err.message}`)) : ok(),
    );
  });
}

async function openEmbedded(dataDir: string, onLost: ((err: Error) => void) | undefined, pointer: string): Promise<Store> {
  mkdirSync(dataDir, { recursive: true });
  const workerUrl = new URL('./pglite-worker.mjs', import.meta.url);
  let fresh = !existsSync(join(dataDir, 'PG_VERSION'));
  await initialiseEmbedded(dataDir, workerUrl);
  // Unix socket paths are limited to ~100 bytes, so the socket lives in a short temp dir.
  const sockDir = mkdtempSync(join(tmpdir(), 'cmn-'));
  const socketPath = join(sockDir, '.s.PGSQL.5432');
  // A worker that dies on its own leaves every query waiting on a socket nobody serves: the
  // process must end so a supervisor restarts it (DECISIONS.md "Reliability promises").
  let closing = false;
  const lost = (err: Error) => {
    if (closing) return;
    closing = true;
    onLost?.(err);
  };
  const startWorker = async (): Promise<Worker> => {
    const w = new Worker(workerUrl, {
      // The worker's JavaScript only relays protocol bytes between the socket and PGlite: a small
      // young generation (V8's default grows to 2 x 16 MB, resident once touched) is enough.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
      workerData: { dataDir, socketPath, backupPath: join(sockDir, 'backup') },
    });
    await new Promise<void>((ok, ko) => {
      w.once('error', ko);
      w.once('message', (m: { type: string; message?: string }) =>
        m.type === 'ready' ? ok() : ko(new Error(`PGlite failed to start: ${m.message}`)),
      );
    });
    w.on('error', lost);
    w.on('exit', (code) => lost(new Error(`the embedded database's worker exited with code ${code}`)));
    return w;
  };
  /** Asks the worker to close PGlite (within 3 s), then ends the thread. True when it closed. */
  const stopWorker = async (w: Worker): Promise<boolean> => {
    w.removeAllListeners('error');
    w.removeAllListeners('exit');
    w.on('error', () => {});
    const stopped = await new Promise<boolean>((ok) => {
      const timer = setTimeout(() => ok(false), 3000);
      w.once('message', (m: { type: string }) => {
        if (m.type === 'stopped') {
          clearTimeout(timer);
          ok(true);
        }
      });
      w.postMessage({ type: 'stop' });
    });
    await w.terminate();
    return stopped;
  };
  let worker = await startWorker();
  writeFileSync(pointer, join(sockDir, 'backup'));
  // PGlite is one database session: a single connection keeps transactions from interleaving.
  const sql = postgres({ host: sockDir, port: 5432, database: 'postgres', username: 'postgres', max: 1, ...quiet });
  return {
    sql: guardOneConnection(sql),
    kind: 'pglite',
    get worker() {
      return worker;
    },
    async settle() {
      // The first start's migrations grew the WebAssembly memory (about 30 MB more than a later
      // start holds); a new worker on the migrated directory returns it. Only on that first start.
      if (!fresh || closing) return;
      fresh = false;
      await stopWorker(worker);
      rmSync(socketPath, { force: true });
      rmSync(join(sockDir, 'backup'), { force: true });
      worker = await startWorker();
    },
    async close() {
      closing = true;
      const ended = await endWithin(sql);
      const stopped = await stopWorker(worker);
      rmSync(pointer, { force: true });
      rmSync(sockDir, { recursive: true, force: true });
      return ended && stopped;
    },
  };
}
