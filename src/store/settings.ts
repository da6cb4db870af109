import { randomBytes } from 'node:crypto';
import type { Sql } from 'postgres';

/** Returns the stored setting, creating it with `make()` the first time (race-safe). */
export async function getOrCreateSetting(sql: Sql, key: string, make: () => string): Promise<string> {
  await sql`INSERT INTO settings (key, value) VALUES (${key}, ${make()}) ON CONFLICT (key) DO NOTHING`;
  const [row] = await sql<{ value: string }[]>`SELECT value FROM settings WHERE key = ${key}`;
  if (!row) throw new Error(`setting ${key} missing after insert`);
  return row.value;
}

export async function serverSecret(sql: Sql): Promise<Buffer> {
  return Buffer.from(await getOrCreateSetting(sql, 'server_secret', () => randomBytes(32).toString('hex')), 'hex');
}

export async function bumpCounter(sql: Sql, name: string): Promise<void> {
  await sql`INSERT INTO counters (name, value) VALUES (${name}, 1)
            ON CONFLICT (name) DO UPDATE SET value = counters.value + 1`;
}

export async function readCounter(sql: Sql, name: string): Promise<number> {
  const [row] = await sql<{ value: string }[]>`SELECT value FROM counters WHERE name = ${name}`;
  return row ? Number(row.value) : 0;
}
