// SQL for idempotent writes (sql/031_idempotency_keys.sql, sql/035_idempotency_sealed.sql;
// DECISIONS.md "Idempotent writes"). The key is only ever its SHA-256 here and the answer only
// sealed (src/domain/sealed-answer.ts): nothing this file writes holds a key or a credential.
import type { Sql, TransactionSql } from 'postgres';

type Tx = TransactionSql | Sql;

export interface StoredAnswer {
  fingerprint: Buffer;
  status: number;
  sealed: Buffer;
}

/** The answer kept for a scope and key hash, when it was stored after `since`. */
export async function findAnswer(sql: Tx, scope: string, keyHash: Buffer, since: Date): Promise<StoredAnswer | null> {
  const [row] = await sql<StoredAnswer[]>`
    SELECT fingerprint, status, sealed FROM idempotency_keys
    WHERE scope = ${scope} AND key_hash = ${keyHash} AND created_at > ${since}`;
  return row ?? null;
}

/** Inside a transaction: true when no other transaction holds this scope and key (held to the
 * commit), false when one does (a repeat while the first is in flight, on any node). */
export async function tryHold(tx: Tx, scope: string, keyHash: Buffer): Promise<boolean> {
  const [row] = await tx<{ held: boolean }[]>`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${`idem\n${scope}\n${keyHash.toString('hex')}`}, 0)) AS held`;
  return row?.held === true;
}

/** Keeps the first answer, in the write's own transaction; a row past its 24 h (not yet reaped)
 * is replaced. */
export async function saveAnswer(
  tx: Tx,
  a: { scope: string; keyHash: Buffer; fingerprint: Buffer; status: number; sealed: Buffer; at: Date; expiredBefore: Date },
): Promise<void> {
  await tx`
    INSERT INTO idempotency_keys (scope, key_hash, fingerprint, status, sealed, created_at)
    VALUES (${a.scope}, ${a.keyHash}, ${a.fingerprint}, ${a.status}, ${a.sealed}, ${a.at})
    ON CONFLICT (scope, key_hash) DO UPDATE
      SET fingerprint = excluded.fingerprint, status = excluded.status, sealed = excluded.sealed, created_at = excluded.created_at
      WHERE idempotency_keys.created_at <= ${a.expiredBefore}`;
}

/** Deletes answers stored at or before `before` (at most `limit` per call), and any row in the
 * clear form a node of the previous release wrote during a rolling upgrade (sql/035); returns how
 * many. */
export async function reapAnswers(sql: Sql, before: Date, limit = 5000): Promise<number> {
  const rows = await sql`
    DELETE FROM idempotency_keys WHERE ctid IN (
      SELECT ctid FROM idempotency_keys WHERE created_at <= ${before} OR key IS NOT NULL LIMIT ${limit})`;
  return rows.count;
}
