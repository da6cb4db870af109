// SQL for private memory (spec 2.6, 8; DECISIONS.md "Memory"). The 200-key cap is checked under
// a lock on the owner's identity row, so two concurrent new keys at 199 cannot both pass
// (sql/024_memory_put.sql).
import type { Sql } from 'postgres';

export interface MemoryRow {
  key: string;
  value: unknown;
  size_bytes: number;
  created_at: Date;
  updated_at: Date;
}

export type PutResult = { kind: 'written'; row: MemoryRow; created: boolean } | { kind: 'full' };

/** Writes a key under the cap, in one statement and one round trip (sql/024_memory_put.sql). */
export async function putMemory(
  sql: Sql,
  owner: number,
  key: string,
  json: string,
  size: number,
  max: number,
  at: Date,
): Promise<PutResult> {
  const [r] = await sql<(MemoryRow & { created: boolean })[]>`
    SELECT key, value, size_bytes, created_at, updated_at, created
    FROM memory_put(${owner}, ${key}, ${json}::text::jsonb, ${size}, ${max}, ${at})`;
  if (!r) return { kind: 'full' };
  const { created, ...row } = r;
  return { kind: 'written', row, created };
}

export async function getMemory(sql: Sql, owner: number, key: string): Promise<MemoryRow | null> {
  const [row] = await sql<MemoryRow[]>`
    SELECT key, value, size_bytes, created_at, updated_at FROM memory WHERE identity_id = ${owner} AND key = ${key}`;
  return row ?? null;
}

export async function deleteMemory(sql: Sql, owner: number, key: string): Promise<boolean> {
  const rows = await sql`DELETE FROM memory WHERE identity_id = ${owner} AND key = ${key} RETURNING 1`;
  return rows.length === 1;
}

/** Keys in order, after the `after` cursor; values are not read. */
export async function listMemory(sql: Sql, owner: number, limit: number, after: string | null) {
  return sql<{ key: string; size_bytes: number; updated_at: Date }[]>`
    SELECT key, size_bytes, updated_at FROM memory
    WHERE identity_id = ${owner} AND (${after}::text IS NULL OR key > ${after})
    ORDER BY key LIMIT ${limit}`;
}

export async function memoryUsage(sql: Sql, owner: number): Promise<{ keys: number; bytes: number }> {
  const [row] = await sql<{ keys: number; bytes: number }[]>`
    SELECT count(*)::int AS keys, coalesce(sum(size_bytes), 0)::int AS bytes FROM memory WHERE identity_id = ${owner}`;
  return row ?? { keys: 0, bytes: 0 };
}
