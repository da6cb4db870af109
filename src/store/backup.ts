// Backups of both stores (docs/operations.md "Backup and restore").
// Embedded (PGlite): the data directory as a gzipped tar (PGlite's dumpDataDir), taken by the
// running server's own PGlite under its query lock when a server runs, or by opening the directory
// when none does; restored by loading the tar into an empty DATA_DIR.
// PostgreSQL: pg_dump's custom format (of DATABASE_SCHEMA alone when one is set), one snapshot
// transaction while the nodes keep serving; restored with pg_restore into an empty database
// (src/store/pg-restore.ts: also from client tools newer than the server).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import postgres from 'postgres';
import { backupPointer } from './db.js';
import { pgRestore, runTool } from './pg-restore.js';

export interface BackupTarget {
  databaseUrl: string | undefined;
  schema: string | undefined;
  dataDir: string;
}

export async function backup(t: BackupTarget, file: string): Promise<void> {
  if (t.databaseUrl) {
    const only = t.schema ? ['--schema', t.schema] : [];
    await runTool('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', ...only, '--file', file, '--dbname', t.databaseUrl]);
    return;
  }
  writeFileSync(file, await embeddedDump(t.dataDir));
}

export async function restore(t: BackupTarget, file: string): Promise<void> {
  if (!existsSync(file)) throw new Error(`no backup file at ${file}`);
  if (t.databaseUrl) {
    await refuseNonEmptyDatabase(t.databaseUrl, t.schema);
    await pgRestore(t.databaseUrl, file);
    return;
  }
  const pgDir = resolve(t.dataDir, 'pg');
  if (existsSync(pgDir) && readdirSync(pgDir).length > 0) {
    throw new Error(`${pgDir} is not empty: restore into an empty DATA_DIR (nothing was changed)`);
  }
  mkdirSync(pgDir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(pgDir, { loadDataDir: new Blob([readFileSync(file)]) });
  await db.query('SELECT 1 FROM schema_migrations LIMIT 1');
  await db.close();
}

/** From the running server's backup socket when one answers, else from the directory itself. */
async function embeddedDump(dataDir: string): Promise<Buffer> {
  const pointer = backupPointer(dataDir);
  if (existsSync(pointer)) {
    const fromServer = await readSocket(readFileSync(pointer, 'utf8')).catch((err: NodeJS.ErrnoException) => {
      // A pointer left by a server that died: no server holds the directory any more.
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') return null;
      throw err;
    });
    if (fromServer) return fromServer;
  }
  const pgDir = resolve(dataDir, 'pg');
  if (!existsSync(resolve(pgDir, 'PG_VERSION'))) throw new Error(`no embedded database in ${pgDir}`);
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(pgDir);
  try {
    return Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
  } finally {
    await db.close();
  }
}

function readSocket(path: string): Promise<Buffer> {
  return new Promise((ok, ko) => {
    const chunks: Buffer[] = [];
    const conn = connect(path);
    conn.on('data', (b: Buffer) => chunks.push(b));
    conn.on('error', ko);
    conn.on('end', () => (chunks.length > 0 ? ok(Buffer.concat(chunks)) : ko(new Error('the server sent an empty backup'))));
  });
}

/** pg_restore into a database that already holds the service's tables would mix two histories. */
async function refuseNonEmptyDatabase(url: string, schema: string | undefined): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ taken: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM information_schema.tables
        WHERE table_name = 'schema_migrations' AND table_schema = ${schema ?? 'public'}) AS taken`;
    if (row?.taken) throw new Error(`the target database already has a commons schema (${schema ?? 'public'}): restore into an empty one`);
  } finally {
    await sql.end();
  }
}
