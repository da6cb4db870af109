// Entry point of `npm run backup -- FILE` and `npm run restore -- FILE` (node dist/backup.js).
// Uses the same configuration as the server (DATA_DIR, or DATABASE_URL and DATABASE_SCHEMA), so
// the command that backs up a deployment is the one that runs it, with the same environment.
import { loadConfig } from './config.js';
import { backup, restore } from './store/backup.js';

const [mode, file] = process.argv.slice(2);
if ((mode !== 'backup' && mode !== 'restore') || !file) {
  console.error('usage: npm run backup -- FILE | npm run restore -- FILE');
  process.exit(2);
}
const config = loadConfig();
const target = { databaseUrl: config.databaseUrl, schema: config.databaseSchema, dataDir: config.dataDir };
const where = config.databaseUrl
  ? `PostgreSQL${config.databaseSchema ? ` schema ${config.databaseSchema}` : ''}`
  : `embedded ${config.dataDir}`;
try {
  await (mode === 'backup' ? backup(target, file) : restore(target, file));
  console.log(`${mode}: ${where} ${mode === 'backup' ? '->' : '<-'} ${file}`);
} catch (err) {
  console.error(`${mode} failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
