// Runs PGlite and its socket server off the main thread (DESIGN.md "Embedded default"): PGlite executes queries
// synchronously inside WebAssembly, so hosting it here keeps the HTTP event loop free while a
// query runs. Plain JavaScript so that Node, tsx and vitest all load it as a worker unchanged.
//
// Memory (issue 47; docs/benchmarks-history.md "Memory at rest and anonymous reads (issue 47)"):
// WebAssembly memory only grows, so what PGlite touches once stays resident for the life of the
// process. What weighed most (the process with the worker, also after the first start's
// migrations: db.ts restarts the worker then, src/store/db.ts `settle`):
// - initdb, which on a fresh data directory runs inside the process beside a second PostgreSQL
//   instance (about 500 MB more at peak, never given back). A fresh directory is therefore
//   initialised by this same file run as a child process (`node pglite-worker.mjs --init <dir>`),
//   which exits and returns all of it; the worker then opens the directory like on any restart.
// - shared_buffers: initdb writes 128MB, and PostgreSQL zeroes the whole pool at start. The
//   embedded store is one session on a small host: SHARED_BUFFERS below is its pool, given on the
//   command line (it overrides postgresql.conf), so existing data directories get it too; likewise
//   max_connections (MAX_CONNECTIONS below).
// - PostgreSQL's WebAssembly compiled twice: V8 compiles it with its baseline compiler (Liftoff),
//   then recompiles the functions that run often with its optimising one (TurboFan), whose code and
//   compiler memory stayed resident (about 50 MB). The embedded store keeps the baseline code
//   alone; measured on this machine, its queries ran no slower (the optimising compiler's work
//   competed with them for the two cores). The flag is process-wide; the service runs no other
//   WebAssembly. `npm start` and the image give it on node's command line (package.json,
//   Dockerfile): Node 24's V8 no longer takes a flag set once it runs (measured in the Debian 13
//   root: 757 MB at ready on a first start without it, 217 MB with it). Set here too, for Node 20
//   started without it; it must come before PGlite compiles its module, hence the dynamic imports.
import { createServer } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

setFlagsFromString('--liftoff-only');
const { PGlite } = await import('@electric-sql/pglite');
const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');

/** The embedded database's buffer pool: its working set on a small host (the reads the service
 * serves hot come from its own page caches, not from PostgreSQL's pool). */
export const SHARED_BUFFERS = '8MB';
/** PGlite runs one backend (single-user mode; the socket server below relays its connections to
 * it), but PostgreSQL sizes part of its shared memory (process slots, the lock and predicate-lock
 * tables) by max_connections, 100 in the postgresql.conf initdb writes, and zeroes it at start:
 * about 4 MB of the WebAssembly memory for backends that never exist (issue 47). */
export const MAX_CONNECTIONS = 5;
const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`, '-c', `max_connections=${MAX_CONNECTIONS}`];

/** `npm run backup` on a running server connects here and receives the data directory as a
 * gzipped tar. PGlite takes it under its query lock, between two protocol messages, so the copy
 * is a crash-consistent instant: a transaction open at that moment is rolled back on restore, a
 * committed one is kept (docs/operations.md "Backup and restore"). */
function serveBackups(db, backupPath) {
  const backups = createServer((conn) => {
    conn.on('error', () => {});
    db.dumpDataDir('gzip')
      .then(async (blob) => conn.end(Buffer.from(await blob.arrayBuffer())))
      .catch(() => conn.destroy());
  });
  return new Promise((ok, ko) => {
    backups.once('error', ko);
    backups.listen(backupPath, () => ok(backups));
  });
}

async function start() {
  const { dataDir, socketPath, backupPath } = workerData;
  const db = await PGlite.create(dataDir, { startParams });
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 8 });
  await server.start();
  const backups = await serveBackups(db, backupPath);
  parentPort.postMessage({ type: 'ready' });
  parentPort.on('message', async (msg) => {
    if (msg.type !== 'stop') return;
    backups.close();
    await server.stop();
    await db.close();
    parentPort.postMessage({ type: 'stopped' });
  });
}

/** `--init <dir>` in a child process: initialise a fresh data directory, close it, exit. */
async function init(dir) {
  const db = await PGlite.create(dir, { startParams });
  await db.close();
}

if (!isMainThread) {
  start().catch((err) => {
    parentPort.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  });
} else if (process.argv[2] === '--init' && process.argv[3]) {
  init(process.argv[3]).then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
