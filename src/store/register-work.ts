// SQL for registration work (sql/015_register_pow.sql): the flood measure and the used-challenge set.
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

/** Registrations from all addresses in the last hour (the database's clock, as joined_at). */
export async function registrationsLastHour(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM identities WHERE joined_at > now() - interval '1 hour'`;
  return row?.n ?? 0;
}

/** Marks a challenge used inside the registration's transaction; false when it already was
 * (a concurrent insert of the same id waits for the other transaction and then sees its row). */
export async function useChallenge(tx: Tx, id: string, expiresAt: Date): Promise<boolean> {
  const rows = await tx`INSERT INTO register_pow_used (challenge_id, expires_at) VALUES (${id}, ${expiresAt})
    ON CONFLICT (challenge_id) DO NOTHING RETURNING challenge_id`;
  return rows.length === 1;
}

/** Forgets challenges that expired before `now`. */
export async function pruneUsed(sql: Sql, now: Date): Promise<number> {
  const rows = await sql`DELETE FROM register_pow_used WHERE expires_at < ${now} RETURNING challenge_id`;
  return rows.length;
}
