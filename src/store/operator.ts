// SQL for the operator's own records: identity verification, token revocation and disbursements.
import type { Tx } from './ledger.js';

export interface VerificationRow {
  id: number;
  zho_level: string;
  verification_status: string;
}

export async function lockVerification(tx: Tx, id: number): Promise<VerificationRow | null> {
  const [row] = await tx<VerificationRow[]>`
    SELECT id::int AS id, zho_level, verification_status FROM identities WHERE id = ${id} FOR UPDATE`;
  return row ?? null;
}

export async function setVerification(tx: Tx, id: number, zhoLevel: string, status: string): Promise<void> {
  await tx`UPDATE identities SET zho_level = ${zhoLevel}, verification_status = ${status} WHERE id = ${id}`;
}

/** Ends the identity's token: true when there was one to end. */
export async function revokeToken(tx: Tx, id: number): Promise<boolean> {
  const rows = await tx`UPDATE identities SET token_hash = NULL WHERE id = ${id} AND token_hash IS NOT NULL RETURNING id`;
  return rows.length > 0;
}

/** A funding goal's status, its row locked; null when there is no such goal. */
export async function lockGoal(tx: Tx, id: string): Promise<string | null> {
  const [row] = await tx<{ status: string }[]>`SELECT status FROM funding_goals WHERE id = ${id} FOR UPDATE`;
  return row?.status ?? null;
}

export async function setGoalStatus(tx: Tx, id: string, status: string): Promise<void> {
  await tx`UPDATE funding_goals SET status = ${status} WHERE id = ${id}`;
}

export interface DisbursementRow {
  id: string;
  seq: string;
  asset: 'ETH' | 'BTC';
  amount: string;
  to_address: string;
  purpose: string;
  goal_id: string | null;
  tx_hash: string | null;
  approved_by: string;
  approved_at: Date;
  tx_recorded_at: Date | null;
}

const DISB =
  'id, seq::text AS seq, asset, amount::text AS amount, to_address, purpose, goal_id, tx_hash, approved_by, approved_at, tx_recorded_at';

export interface NewDisbursement {
  asset: 'ETH' | 'BTC';
  amount: string;
  toAddress: string;
  purpose: string;
  goalId: string | null;
  txHash: string | null;
  at: Date;
}

export async function insertDisbursement(tx: Tx, d: NewDisbursement): Promise<DisbursementRow> {
  const [row] = await tx.unsafe<DisbursementRow[]>(
    `INSERT INTO disbursements (asset, amount, to_address, purpose, goal_id, tx_hash, approved_at, tx_recorded_at)
     VALUES ($1, $2::numeric, $3, $4, $5, $6, $7, CASE WHEN $6::text IS NULL THEN NULL ELSE $7::timestamptz END)
     RETURNING ${DISB}`,
    [d.asset, d.amount, d.toAddress, d.purpose, d.goalId, d.txHash, d.at],
  );
  if (!row) throw new Error('insert disbursements returned nothing');
  return row;
}

export async function findDisbursement(tx: Tx, id: string, lock = false): Promise<DisbursementRow | null> {
  const rows = await tx.unsafe<DisbursementRow[]>(`SELECT ${DISB} FROM disbursements WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0] ?? null;
}

export async function findDisbursementByTx(tx: Tx, txHash: string): Promise<DisbursementRow | null> {
  const rows = await tx.unsafe<DisbursementRow[]>(`SELECT ${DISB} FROM disbursements WHERE tx_hash = $1`, [txHash]);
  return rows[0] ?? null;
}

export async function attachTx(tx: Tx, id: string, txHash: string, at: Date): Promise<DisbursementRow | null> {
  const rows = await tx.unsafe<DisbursementRow[]>(
    `UPDATE disbursements SET tx_hash = $2, tx_recorded_at = $3 WHERE id = $1 AND tx_hash IS NULL RETURNING ${DISB}`,
    [id, txHash, at],
  );
  return rows[0] ?? null;
}

/** Newest first; `beforeSeq` is the keyset cursor. */
export async function listDisbursements(tx: Tx, limit: number, beforeSeq: string | null): Promise<DisbursementRow[]> {
  return tx.unsafe<DisbursementRow[]>(
    `SELECT ${DISB} FROM disbursements WHERE ($1::bigint IS NULL OR seq < $1::bigint) ORDER BY disbursements.seq DESC LIMIT $2`,
    [beforeSeq, limit],
  );
}
