// SQL for idempotent writes (sql/031_idempotency_keys.sql; DECISIONS.md "Idempotent writes").
import type { Sql, TransactionSql } from 'postgres';

type Tx = TransactionSql | Sql;

export interface StoredAnswer {
  fingerprint: Buffer;
  status: number;
  body: unknown;
}

/** The answer kept for a scope and key, when it was stored after `since`. */
export async function findAnswer(sql: Tx, scope: string, key: string, since: Date): Promise<StoredAnswer | null> {
  const [row] = await sql<StoredAnswer[]>`
    SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = ${scope} AND key = ${key} AND created_at > ${since}`;
  return row ?? null;
}

/** Inside a transaction: true when no other transaction holds this scope and key (held to the
 * commit), false when one does (a repeat while the first is in flight, on any node). */
export async function tryHold(tx: Tx, scope: string, key: string): Promise<boolean> {
  const [row] = await tx<{ held: boolean }[]>`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${`idem\n${scope}\n${key}`}, 0)) AS held`;
  return row?.held === true;
}

/** Keeps the first answer, in the write's own transaction; a row past its 24 h (not yet reaped)
 * is replaced. */
export async function saveAnswer(
  tx: Tx,
  a: { scope: string; key: string; fingerprint: Buffer; status: number; body: unknown; at: Date; expiredBefore: Date },
): Promise<void> {
  await tx`
    INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at)
    VALUES (${a.scope}, ${a.key}, ${a.fingerprint}, ${a.status}, ${tx.json(a.body as never)}, ${a.at})
    ON CONFLICT (scope, key) DO UPDATE
      SET fingerprint = excluded.fingerprint, status = excluded.status, body = excluded.body, created_at = excluded.created_at
      WHERE idempotency_keys.created_at <= ${a.expiredBefore}`;
}

/** Deletes answers stored at or before `before` (at most `limit` per call); returns how many. */
export async function reapAnswers(sql: Sql, before: Date, limit = 5000): Promise<number> {
  const rows = await sql`
    DELETE FROM idempotency_keys WHERE ctid IN (
      SELECT ctid FROM idempotency_keys WHERE created_at <= ${before} LIMIT ${limit})`;
  return rows.count;
}
