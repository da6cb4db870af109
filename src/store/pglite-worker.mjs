// Runs PGlite and its socket server off the main thread (DESIGN.md "Embedded default"): PGlite executes queries
// synchronously inside WebAssembly, so hosting it here keeps the HTTP event loop free while a
// query runs. Plain JavaScript so that Node, tsx and vitest all load it as a worker unchanged.
import { createServer } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const { dataDir, socketPath, backupPath } = workerData;

/** `npm run backup` on a running server connects here and receives the data directory as a
 * gzipped tar. PGlite takes it under its query lock, between two protocol messages, so the copy
 * is a crash-consistent instant: a transaction open at that moment is rolled back on restore, a
 * committed one is kept (docs/operations.md "Backup and restore"). */
function serveBackups(db) {
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
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 8 });
  await server.start();
  const backups = await serveBackups(db);
  parentPort.postMessage({ type: 'ready' });
  parentPort.on('message', async (msg) => {
    if (msg.type !== 'stop') return;
    backups.close();
    await server.stop();
    await db.close();
    parentPort.postMessage({ type: 'stopped' });
  });
}

start().catch((err) => {
  parentPort.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
});
