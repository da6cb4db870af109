// SQL for private memory (spec 2.6, 8; DECISIONS.md "Memory"). The 200-key cap is checked under
// a lock on the owner's identity row, so two concurrent new keys at 199 cannot both pass
// (sql/024_memory_put.sql, grouped in sql/026_memory_put_many.sql).
import type { Sql } from 'postgres';
import { PREPARED } from './prepared.js';

export interface MemoryRow {
  key: string;
  value: unknown;
  size_bytes: number;
  created_at: Date;
  updated_at: Date;
}

export type PutResult = { kind: 'written'; row: MemoryRow; created: boolean } | { kind: 'full' };

/** One memory write: the owner, the key, the value's JSON and its size, when it was asked. */
export interface NewMemory {
  owner: number;
  key: string;
  json: string;
  size: number;
  at: Date;
}

/**
 * Writes keys under the cap, in submission order, in one statement and one round trip
 * (sql/026_memory_put_many.sql): the group commit of src/domain/memory.ts calls it with whatever
 * writes arrived together. Returns each write's result, in input order.
 */
export async function putMemories(sql: Sql, puts: NewMemory[], max: number): Promise<PutResult[]> {
  const rows = await sql.unsafe<(MemoryRow & { ord: number; created: boolean })[]>(
    `SELECT ord, key, value, size_bytes, created_at, updated_at, created
       FROM memory_put_many($1::bigint[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6)`,
    [
      puts.map((p) => p.owner),
      puts.map((p) => p.key),
      puts.map((p) => p.json),
      puts.map((p) => p.size),
      puts.map((p) => p.at.toISOString()),
      max,
    ] as never[],
    PREPARED,
  );
  const out: PutResult[] = puts.map(() => ({ kind: 'full' }));
  for (const { ord, created, ...row } of rows) out[ord - 1] = { kind: 'written', row, created };
  return out;
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
