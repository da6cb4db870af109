// How the service opens its store: one place for app.ts and main.ts (which starts opening it
// before it loads the rest of the service, so the embedded database boots meanwhile).
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { openStore, type Store } from './store/db.js';

export function openAppStore(config: Config, log: Logger, onLost?: (err: Error) => void): Promise<Store> {
  return openStore({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.dataDir,
    deadlines: config.db,
    onLost: onLost ?? ((err) => exitOnLostStore(log, err)),
  });
}

/** DECISIONS.md "Reliability promises": a dead embedded database ends the process at once, so a
 * supervisor restarts it, instead of hanging every request. */
function exitOnLostStore(log: Logger, err: Error): void {
  log.fatal({ err: err.message }, 'the embedded database stopped; exiting so a supervisor restarts the service');
  process.exit(70);
}
