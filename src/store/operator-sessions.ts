// SQL for the operator console's sessions (sql/028_operator_sessions.sql): rows are keyed by a
// hash of the session id, never the id itself.
import type { Tx } from './ledger.js';

export interface SessionRow {
  token_fp: Buffer;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

export async function insertSession(sql: Tx, idHash: Buffer, tokenFp: Buffer, at: Date, expiresAt: Date): Promise<void> {
  await sql`INSERT INTO operator_sessions (id_hash, token_fp, created_at, last_seen_at, expires_at)
            VALUES (${idHash}, ${tokenFp}, ${at}, ${at}, ${expiresAt})`;
}

/**
 * The session, when it is still alive at `at` (not past its absolute end, seen within `idleMs`),
 * marked seen now in the same statement; null otherwise.
 */
export async function touchSession(sql: Tx, idHash: Buffer, at: Date, idleMs: number): Promise<SessionRow | null> {
  const idleSince = new Date(at.getTime() - idleMs);
  const [row] = await sql<SessionRow[]>`
    UPDATE operator_sessions SET last_seen_at = ${at}
     WHERE id_hash = ${idHash} AND expires_at > ${at} AND last_seen_at > ${idleSince}
    RETURNING token_fp, created_at, last_seen_at, expires_at`;
  return row ?? null;
}

/** The session, when it is still alive at `at`, without marking it used (a page's own polling
 * must not keep an unattended console signed in). */
export async function peekSession(sql: Tx, idHash: Buffer, at: Date, idleMs: number): Promise<SessionRow | null> {
  const idleSince = new Date(at.getTime() - idleMs);
  const [row] = await sql<SessionRow[]>`
    SELECT token_fp, created_at, last_seen_at, expires_at FROM operator_sessions
     WHERE id_hash = ${idHash} AND expires_at > ${at} AND last_seen_at > ${idleSince}`;
  return row ?? null;
}

/** Ends one session: true when it existed. */
export async function deleteSession(sql: Tx, idHash: Buffer): Promise<boolean> {
  const rows = await sql`DELETE FROM operator_sessions WHERE id_hash = ${idHash} RETURNING 1`;
  return rows.length > 0;
}

/** Ends every session (the operator's "sign out everywhere"); how many there were. */
export async function deleteAllSessions(sql: Tx): Promise<number> {
  const rows = await sql`DELETE FROM operator_sessions RETURNING 1`;
  return rows.length;
}

/** Forgets sessions that can no longer be used (past their end or idle too long). */
export async function purgeSessions(sql: Tx, at: Date, idleMs: number): Promise<void> {
  await sql`DELETE FROM operator_sessions WHERE expires_at <= ${at} OR last_seen_at <= ${new Date(at.getTime() - idleMs)}`;
}
