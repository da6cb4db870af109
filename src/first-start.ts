// The embedded default's first start (issue 47): on a fresh data directory, the server's own
// process does none of the heavy work. A child process of this same entry (src/main.ts, with
// PREPARE_ENV set) opens the store, which initialises the directory (src/store/db.ts), runs the
// migrations, closes it and exits; what that work touched goes with it: the main thread's garbage
// from the migrations (V8 keeps the heap it grew until a full collection, which an idle server
// does not run) and the first database worker's memory (the WebAssembly memory, the allocator's
// arenas it left fragmented). The server then opens the prepared directory as on any restart, and
// holds what a restart holds (docs/benchmarks-history.md "Memory at rest").
import { spawn } from 'node:child_process';
import { openAppStore } from './app-store.js';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { migrate } from './store/migrate.js';

export const PREPARE_ENV = 'COMMONS_PREPARE_DATA_DIR';

/** The child's part: the store opened (initialised when fresh), migrated, closed. Exit 0 when done. */
export async function prepareDataDir(config: Config, log: Logger): Promise<void> {
  // The server process decides when to stop and waits for this one (a terminal's Ctrl-C reaches both).
  const finish = () => {};
  process.on('SIGTERM', finish);
  process.on('SIGINT', finish);
  // The embedded store as the server opens it: a database worker that dies ends this process too.
  const store = await openAppStore(config, log);
  try {
    await migrate(store.sql);
  } finally {
    await store.close();
  }
}

/** The server's part: the child run to its end. A SIGTERM or SIGINT meanwhile lets it finish (two
 * processes on one data directory would corrupt it) and then ends this process with exit 0,
 * nothing served yet. Resolves false when the stop was asked. */
export function prepareInChild(log: Logger): Promise<boolean> {
  let stopAsked = false;
  const stop = () => {
    stopAsked = true;
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Logged once the signals are handled: a supervisor may stop the process as soon as it reads this.
  log.info('first start on an empty data directory: initialising and migrating it in a child process');
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: { ...process.env, [PREPARE_ENV]: '1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return new Promise((ok, ko) => {
    child.once('error', ko);
    child.once('exit', (code, signal) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      if (code === 0) ok(!stopAsked);
      else ko(new Error(`preparing the data directory failed (the child process ended with ${signal ?? `exit code ${code}`})`));
    });
  });
}
