// Entry point: `npm start`. Reads the configuration once, starts the service, and stops it
// gracefully on SIGTERM/SIGINT (finish in-flight requests, close sockets, flush, exit 0).
import { startApp } from './app.js';
import { loadConfig } from './config.js';
import { createLogger } from './log.js';

const config = loadConfig();
const log = createLogger(config.logLevel);

const app = await startApp({ config, log }).catch((err: unknown) => {
  log.fatal({ err }, 'failed to start');
  process.exit(1);
});

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'stopping');
  try {
    await app.close();
    log.info('stopped');
    process.exit(0);
  } catch (err) {
    log.error({ err }, 'unclean stop');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
