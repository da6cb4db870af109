// SQL for token recovery challenges (DECISIONS.md "Beyond the spec": single-use, 5 minutes).
import type { Tx } from './ledger.js';

export async function insertNonce(tx: Tx, nonce: string, identityId: number, at: Date, expiresAt: Date): Promise<void> {
  // Spent and expired challenges of this identity are of no further use: keep the table small.
  await tx`DELETE FROM recovery_nonces WHERE identity_id = ${identityId} AND (used_at IS NOT NULL OR expires_at <= ${at})`;
  await tx`INSERT INTO recovery_nonces (nonce, identity_id, created_at, expires_at)
           VALUES (${nonce}, ${identityId}, ${at}, ${expiresAt})`;
}

export type Burn = 'burnt' | 'unknown' | 'used' | 'expired';

/** Marks the nonce used (whatever the signature turns out to be) and says what it was. */
export async function burnNonce(tx: Tx, nonce: string, identityId: number, at: Date): Promise<Burn> {
  const [row] = await tx<{ used: boolean; expired: boolean }[]>`
    SELECT used_at IS NOT NULL AS used, expires_at <= ${at} AS expired
    FROM recovery_nonces WHERE nonce = ${nonce} AND identity_id = ${identityId} FOR UPDATE`;
  if (!row) return 'unknown';
  if (row.used) return 'used';
  await tx`UPDATE recovery_nonces SET used_at = ${at} WHERE nonce = ${nonce}`;
  return row.expired ? 'expired' : 'burnt';
}
