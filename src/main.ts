// Entry point: `npm start` (node dist/main.js). Reads the configuration once, starts the service,
// and stops it gracefully on SIGTERM/SIGINT (finish in-flight requests, close sockets, flush,
// exit 0).
//
// Start-up order is chosen for speed: the store (on the embedded default, a PGlite worker thread
// that needs ~0.3 s to open its data directory) starts opening first, and the rest of the
// service's modules (~0.4 s of imports) load meanwhile on the main thread.

import { openAppStore } from './app-store.js';
import { type Config, describeConfigError, loadConfig } from './config.js';
import { PREPARE_ENV, prepareDataDir, prepareInChild } from './first-start.js';
import { createLogger } from './log.js';
import { embeddedFresh } from './store/db.js';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  // A configuration the service cannot run with refuses the start, saying which variable and why.
  process.stderr.write(`commons: invalid configuration, not starting:\n${describeConfigError(err)}\n`);
  process.exit(2);
}
const log = createLogger(config.logLevel);
// The embedded default's first start: the data directory prepared by a child process that exits
// (src/first-start.ts), so this process holds no more than on a restart (issue 47).
if (process.env[PREPARE_ENV] === '1') {
  await prepareDataDir(config, log).then(
    () => process.exit(0),
    (err: unknown) => {
      log.fatal({ err }, 'failed to prepare the data directory');
      process.exit(1);
    },
  );
}
if (!config.databaseUrl && embeddedFresh(config.dataDir)) {
  const go = await prepareInChild(log).catch((err: unknown) => {
    log.fatal({ err }, 'failed to start');
    process.exit(1);
  });
  if (!go) {
    log.info('stopped before serving: the data directory is prepared');
    process.exit(0);
  }
}
const store = openAppStore(config, log);
store.catch(() => {}); // reported by startApp below, which awaits the same promise

let stopping = false;
const { startApp } = await import('./app.js');
const starting = startApp({ config, log, store }).catch((err: unknown) => {
  // A start that fails while a stop waits for it (a store wedged after "commons listening", the
  // actors still starting) is that stop cut short: exit 1, said as the stop's.
  if (stopping) log.error({ err }, 'stop cut short: the service was still starting and its start failed');
  else log.fatal({ err }, 'failed to start');
  process.exit(1);
});

/** SIGTERM ends the process within 10 s whatever the store is doing (DECISIONS.md "Every door, the
 * same rules"): exit 0 when drained, 1 when the stop had to cut something short. */
const STOP_DEADLINE_MS = 9000;

async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'stopping');
  // Whatever still waits then (a wedged store, an actor's last flush) is dropped.
  setTimeout(() => {
    log.error({ deadlineMs: STOP_DEADLINE_MS }, 'stop cut short: the deadline passed');
    process.exit(1);
  }, STOP_DEADLINE_MS);
  try {
    // A signal while the service is still starting (after "commons listening", its actors start)
    // stops it once it has started.
    const clean = await (await starting).close();
    if (clean) {
      log.info('stopped');
      process.exit(0);
    }
    log.error('stop cut short: requests or statements still running were dropped');
    process.exit(1);
  } catch (err) {
    log.error({ err }, 'unclean stop');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
