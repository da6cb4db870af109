// Runs PGlite and its socket server off the main thread (issue 2): PGlite executes queries
// synchronously inside WebAssembly, so hosting it here keeps the HTTP event loop free while a
// query runs. Plain JavaScript so that Node, tsx and vitest all load it as a worker unchanged.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const { dataDir, socketPath } = workerData;

async function start() {
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 8 });
  await server.start();
  parentPort.postMessage({ type: 'ready' });
  parentPort.on('message', async (msg) => {
    if (msg.type !== 'stop') return;
    await server.stop();
    await db.close();
    parentPort.postMessage({ type: 'stopped' });
  });
}

start().catch((err) => {
  parentPort.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
});
