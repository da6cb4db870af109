// SQL for treasury deposits (sql/007_treasury.sql). Amounts travel as numeric text (exact).
import type { Sql } from 'postgres';
import type { Asset } from './assets.js';
import type { Tx } from './ledger.js';

export interface DepositRow {
  id: string;
  asset: Asset;
  tx_hash: string;
  state: 'submitted' | 'verifying' | 'verified' | 'rejected';
  reason: string | null;
  amount_base: string | null;
  contributor_name: string;
  memo: string | null;
  on_behalf_of: number | null;
  campaign_id: string | null;
  confirmations: number | null;
  block_number: string | null;
  attempts: number;
  next_check_at: Date;
  expires_at: Date;
  seen_at: Date | null;
  last_error: string | null;
  submitted_at: Date;
  verified_at: Date | null;
  rejected_at: Date | null;
  feed_seq: string | null;
  /** The sender's signature over the proof message (sql/027), as submitted. */
  sender_signature: string | null;
  /** Its check against the chain, made when the deposit verifies. */
  sender_proof: 'valid' | 'invalid' | null;
}

const COLUMNS = `id::text AS id, asset, tx_hash, state, reason, amount_base::text AS amount_base, contributor_name, memo,
  on_behalf_of::int AS on_behalf_of, campaign_id::text AS campaign_id, confirmations, block_number::text AS block_number, attempts, next_check_at, expires_at,
  seen_at, last_error, submitted_at, verified_at, rejected_at, feed_seq::text AS feed_seq, sender_signature, sender_proof`;

export interface NewDeposit {
  asset: Asset;
  txHash: string;
  contributorName: string;
  memo: string | null;
  onBehalfOf: number | null;
  senderSignature: string | null;
  campaignId: string | null;
  at: Date;
  expiresAt: Date;
}

/** Inserts unless the hash is already known for the asset (then null: the unique index decided). */
export async function insertDeposit(sql: Tx, d: NewDeposit): Promise<DepositRow | null> {
  const rows = await sql.unsafe<DepositRow[]>(
    `INSERT INTO deposits (asset, tx_hash, contributor_name, memo, on_behalf_of, next_check_at, expires_at, submitted_at, sender_signature, campaign_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $6, $8, $9)
     ON CONFLICT (hash_key, asset) DO NOTHING RETURNING ${COLUMNS}`,
    [d.asset, d.txHash, d.contributorName, d.memo, d.onBehalfOf, d.at, d.expiresAt, d.senderSignature, d.campaignId],
  );
  return rows[0] ?? null;
}

export async function findDepositById(sql: Tx, id: string): Promise<DepositRow | null> {
  const rows = await sql.unsafe<DepositRow[]>(`SELECT ${COLUMNS} FROM deposits WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** By comparison key (lower case, no 0x); ETH first when the asset is not given. */
export async function findDepositsByHash(sql: Tx, hashKey: string, asset: Asset | null): Promise<DepositRow[]> {
  return sql.unsafe<DepositRow[]>(
    `SELECT ${COLUMNS} FROM deposits WHERE hash_key = $1 AND ($2::text IS NULL OR asset = $2) ORDER BY asset DESC`,
    [hashKey, asset],
  );
}

/**
 * Leases up to `limit` deposits due at `now` for one check: each is pushed to `leaseUntil` and its
 * attempt counted in the same statement, so another verifier (this node or another) skips it, and a
 * verifier that dies mid-check leaves it to be picked up again when the lease ends.
 */
export async function leaseDue(sql: Sql, now: Date, leaseUntil: Date, limit: number): Promise<DepositRow[]> {
  return sql.unsafe<DepositRow[]>(
    `UPDATE deposits SET next_check_at = $2, attempts = attempts + 1
     WHERE id IN (SELECT id FROM deposits WHERE state IN ('submitted', 'verifying') AND next_check_at <= $1
                  ORDER BY next_check_at LIMIT $3 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [now, leaseUntil, limit],
  );
}

export interface CheckPatch {
  state: 'verifying' | 'verified' | 'rejected';
  reason: string | null;
  amountBase: bigint | null;
  confirmations: number | null;
  blockNumber: number | null;
  nextCheckAt: Date;
  seenAt: Date | null;
  lastError: string | null;
  /** Set only with state 'verified' on a deposit that carries a signature. */
  senderProof: 'valid' | 'invalid' | null;
  at: Date;
}

/** Records a check's outcome, only if the deposit is still in `from` (a lost race writes nothing). */
export async function recordCheck(tx: Tx, id: string, from: string, p: CheckPatch): Promise<DepositRow | null> {
  const rows = await tx.unsafe<DepositRow[]>(
    `UPDATE deposits SET state = $3, reason = $4, amount_base = $5::numeric, confirmations = COALESCE($6, confirmations),
       block_number = COALESCE($7, block_number), next_check_at = $8, seen_at = COALESCE(seen_at, $9), last_error = $10,
       verified_at = CASE WHEN $3 = 'verified' THEN $11::timestamptz END,
       rejected_at = CASE WHEN $3 = 'rejected' THEN $11::timestamptz END,
       feed_seq = CASE WHEN $3 = 'verified' THEN nextval('deposit_feed_seq') END, sender_proof = $12
     WHERE id = $1 AND state = $2 RETURNING ${COLUMNS}`,
    [
      id,
      from,
      p.state,
      p.reason,
      p.amountBase === null ? null : p.amountBase.toString(),
      p.confirmations,
      p.blockNumber,
      p.nextCheckAt,
      p.seenAt,
      p.lastError,
      p.at,
      p.senderProof,
    ],
  );
  return rows[0] ?? null;
}

/** The public feed: verified deposits, newest verification first; `beforeSeq` is the cursor. */
export async function verifiedFeed(sql: Sql, limit: number, beforeSeq: bigint | null): Promise<DepositRow[]> {
  return sql.unsafe<DepositRow[]>(
    `SELECT ${COLUMNS} FROM deposits WHERE state = 'verified' AND ($1::bigint IS NULL OR feed_seq < $1)
     ORDER BY feed_seq DESC LIMIT $2`,
    [beforeSeq === null ? null : beforeSeq.toString(), limit],
  );
}

export interface AssetTotal {
  asset: Asset;
  total: string;
  deposits: number;
}

export async function verifiedTotals(sql: Tx, identityId: number | null = null): Promise<AssetTotal[]> {
  return sql.unsafe<AssetTotal[]>(
    `SELECT asset, sum(amount_base)::text AS total, count(*)::int AS deposits FROM deposits
     WHERE state = 'verified' AND ($1::bigint IS NULL OR on_behalf_of = $1) GROUP BY asset`,
    [identityId],
  );
}

export async function hasTreasurySupportPoints(tx: Tx, identityId: number): Promise<boolean> {
  const rows = await tx`SELECT 1 FROM point_events WHERE identity_id = ${identityId} AND kind = 'treasury_support'`;
  return rows.length > 0;
}
