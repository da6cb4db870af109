// Numbered migrations from sql/, applied in order inside transactions and recorded in
// schema_migrations; running them again is a no-op. Then the SQL functions of sql/functions/, one
// file each (CREATE OR REPLACE), applied after the migrations in file-name order whenever their
// checksum differs from the one recorded in schema_functions: a function is changed by editing its
// one file, never by writing it out again in a migration (docs/architecture.md "SQL functions"). Migrations only move forward: a database that
// records a version this build does not have was migrated by a newer node, and this node refuses
// to start on it rather than write into a schema it does not know (docs/operations.md, upgrades;
// DESIGN.md "Shape": migrations as numbered files).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { Sql } from 'postgres';
import { findUp } from '../paths.js';

/** The project's sql/ directory, with a trailing slash. */
export const SQL_DIR = `${findUp(import.meta.url, 'sql', '001_foundation.sql')}/`;

export interface Migration {
  version: number;
  name: string;
  text: string;
}

/** The migrations in `dir`, in order. Two files with one number (branches merged side by side)
 * would leave one of them unapplied on some databases: refused here, before anything runs. */
export function listMigrations(dir = SQL_DIR): Migration[] {
  const list = readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f, text: readFileSync(dir + f, 'utf8') }));
  for (let i = 1; i < list.length; i++) {
    const [a, b] = [list[i - 1] as Migration, list[i] as Migration];
    if (a.version === b.version) throw new Error(`two migrations share version ${a.version}: ${a.name} and ${b.name}; renumber one`);
  }
  return list;
}

export interface SqlFunction {
  name: string;
  text: string;
}

/** The function files of `dir`/functions/, in file-name order (the order they are applied in). */
export function listFunctions(dir = SQL_DIR): SqlFunction[] {
  const fdir = `${dir}functions/`;
  if (!existsSync(fdir)) return [];
  return readdirSync(fdir)
    .filter((f) => /^[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ name: f, text: readFileSync(fdir + f, 'utf8') }));
}

/** One checksum over every function file's name and text: what schema_functions records. */
export function functionsChecksum(fns: SqlFunction[]): string {
  const h = createHash('sha256');
  for (const f of fns) h.update(f.name).update('\0').update(f.text).update('\0');
  return h.digest('hex');
}

/** Applies every migration not yet recorded, then the function files when they changed.
 * Serialised across nodes by an advisory lock. Returns the versions of the migrations applied. */
export async function migrate(sql: Sql, dir = SQL_DIR): Promise<number[]> {
  const known = listMigrations(dir);
  const fns = listFunctions(dir);
  const checksum = functionsChecksum(fns);
  if (await upToDate(sql, known, checksum)) return [];
  const applied: number[] = [];
  await sql.begin(async (tx) => {
    // Migrations (and waiting for another node's) may take longer than a request's deadlines.
    await tx`SET LOCAL statement_timeout = 0`;
    await tx`SET LOCAL lock_timeout = 0`;
    await tx`SELECT pg_advisory_xact_lock(7262011)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const rows = await tx<Recorded[]>`SELECT version, name FROM schema_migrations ORDER BY version`;
    const { unknown, missing } = compare(rows, known);
    refuseUnknown(unknown, known);
    for (const m of missing) {
      await tx.unsafe(m.text);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(m.version);
    }
    // The functions, after the migrations (which keep tables and data, and hold the historical
    // definitions they ran, byte for byte): re-applied as a whole when any file changed, in
    // file-name order. Bodies are not checked at creation (as pg_dump restores them), so one
    // function may call another whose file sorts later; every call is checked when it runs.
    await tx`CREATE TABLE IF NOT EXISTS schema_functions (
      one boolean PRIMARY KEY DEFAULT true CHECK (one), checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const [rec] = await tx<{ checksum: string }[]>`SELECT checksum FROM schema_functions`;
    if (rec?.checksum !== checksum) {
      await tx`SET LOCAL check_function_bodies = off`;
      for (const f of fns) await tx.unsafe(f.text);
      await tx`INSERT INTO schema_functions (checksum) VALUES (${checksum})
        ON CONFLICT (one) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()`;
    }
  });
  return applied;
}

/** The start's usual case in one read and no lock (six statements fewer, and on the embedded
 * database, whose first queries are slow, about a tenth of a second sooner): every migration this
 * build knows is recorded and nothing else is, and the function files are those last applied. Anything else, including no table yet, takes the
 * locked path above, which applies what is missing or refuses a newer schema. A newer node that
 * migrates after this read is the same case as one that migrates after the locked check. */
async function upToDate(sql: Sql, known: Migration[], checksum: string): Promise<boolean> {
  // A table missing (a new database, or one migrated by a build before sql/functions/) is asked
  // first rather than caught as undefined_table: postgres.js formats a failed query's stack, and
  // with `--enable-source-maps` Node then parses the bundle's source maps into some 100,000 arrays
  // it keeps for good, 10 MB of a first start's memory at rest (docs/benchmarks-history.md "Memory
  // at rest on Node 24").
  const [t] = await sql<{ m: boolean; f: boolean }[]>`
    SELECT to_regclass('schema_migrations') IS NOT NULL AS m, to_regclass('schema_functions') IS NOT NULL AS f`;
  if (!t?.m || !t.f) return false;
  const rows = await sql<(Recorded & { fsum: string | null })[]>`
    SELECT version, name, (SELECT checksum FROM schema_functions) AS fsum FROM schema_migrations`;
  const { unknown, missing } = compare(rows, known);
  return unknown.length === 0 && missing.length === 0 && rows[0]?.fsum === checksum;
}

type Recorded = { version: number; name: string };

/** What the database records that this build does not know (by version and name), and what this
 * build has that the database has not applied (by version). */
function compare(rows: Recorded[], known: Migration[]): { unknown: Recorded[]; missing: Migration[] } {
  const names = new Map(known.map((m) => [m.version, m.name]));
  const done = new Set(rows.map((r) => r.version));
  return { unknown: rows.filter((r) => names.get(r.version) !== r.name), missing: known.filter((m) => !done.has(m.version)) };
}

/** Thrown when the database was migrated past what this build knows; nothing is written. */
export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
}

function refuseUnknown(unknown: Recorded[], known: Migration[]): void {
  if (unknown.length === 0) return;
  const newest = known.at(-1)?.name ?? 'none';
  throw new SchemaTooNewError(
    `database schema has migrations this build does not know (${unknown.map((r) => r.name).join(', ')}); ` +
      `this build knows up to ${newest}. A newer version of the service migrated this database: ` +
      'run that version (or newer) here; migrations only move forward and are never undone.',
  );
}

/** True when every migration file has been applied (the /readyz check). */
export async function migrationsCurrent(sql: Sql, dir = SQL_DIR): Promise<boolean> {
  const rows = await sql<Recorded[]>`SELECT version, name FROM schema_migrations`;
  return compare(rows, listMigrations(dir)).missing.length === 0;
}
