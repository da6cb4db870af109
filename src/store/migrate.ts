// Numbered migrations from sql/, applied in order inside transactions and recorded in
// schema_migrations; running them again is a no-op (issue 2).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Sql } from 'postgres';

export const SQL_DIR = fileURLToPath(new URL('../../sql/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  text: string;
}

export function listMigrations(dir = SQL_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f, text: readFileSync(dir + f, 'utf8') }));
}

/** Applies every migration not yet recorded. Serialised across nodes by an advisory lock. */
export async function migrate(sql: Sql, dir = SQL_DIR): Promise<number[]> {
  const applied: number[] = [];
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(7262011)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set((await tx<{ version: number }[]>`SELECT version FROM schema_migrations`).map((r) => r.version));
    for (const m of listMigrations(dir)) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.text);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(m.version);
    }
  });
  return applied;
}

/** True when every migration file has been applied (the /readyz check). */
export async function migrationsCurrent(sql: Sql, dir = SQL_DIR): Promise<boolean> {
  const rows = await sql<{ version: number }[]>`SELECT version FROM schema_migrations`;
  const done = new Set(rows.map((r) => r.version));
  return listMigrations(dir).every((m) => done.has(m.version));
}
