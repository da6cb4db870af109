// SQL for identities and guests.
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';
import { PREPARED } from './prepared.js';

export interface IdentityRow {
  id: number;
  name: string;
  purpose: string | null;
  public_key: string | null;
  participation_reason: string | null;
  zho_level: string;
  verification_status: string;
  state: 'registered' | 'resident';
  invite_code: string;
  invited_by: number | null;
  founding_resident: boolean;
  joined_at: Date;
  last_visit_at: Date | null;
  visits: number;
  last_heartbeat_at: Date | null;
}

const COLUMNS = `id::int AS id, name, purpose, public_key, participation_reason, zho_level, verification_status,
  state, invite_code, invited_by::int AS invited_by, founding_resident, joined_at, last_visit_at, visits,
  last_heartbeat_at`;

export interface NewIdentity {
  name: string;
  purpose: string | null;
  publicKey: string | null;
  participationReason: string | null;
  zhoLevel: string;
  tokenHash: Buffer;
  inviteCode: string;
  invitedBy: number | null;
  guestNumber: number | null;
}

export async function insertIdentity(tx: Tx, n: NewIdentity): Promise<IdentityRow> {
  const [row] = await tx.unsafe<IdentityRow[]>(
    `INSERT INTO identities (id, name, purpose, public_key, participation_reason, zho_level, token_hash,
       invite_code, invited_by, guest_number)
     VALUES (nextval('member_number_seq'), $1, $2, $3, $4, $5, $6, $7, $8, $9)
     RETURNING ${COLUMNS}`,
    [n.name, n.purpose, n.publicKey, n.participationReason, n.zhoLevel, n.tokenHash, n.inviteCode, n.invitedBy, n.guestNumber],
  );
  if (!row) throw new Error('insert identities returned nothing');
  return row;
}

export async function findByTokenHash(sql: Tx, hash: Buffer): Promise<IdentityRow | null> {
  const rows = await sql.unsafe<IdentityRow[]>(`SELECT ${COLUMNS} FROM identities WHERE token_hash = $1`, [hash], PREPARED);
  return rows[0] ?? null;
}

/** Identities by token hash, many in one query (the grouped token check, src/domain/identity.ts):
 * one answer per hash, in order, null for a hash that names no one. */
export async function findByTokenHashes(sql: Tx, hashes: Buffer[]): Promise<(IdentityRow | null)[]> {
  const rows = await sql.unsafe<(IdentityRow & { token_hash: Buffer })[]>(
    `SELECT ${COLUMNS}, token_hash FROM identities
      WHERE token_hash = ANY(ARRAY(SELECT decode(h, 'hex') FROM unnest($1::text[]) AS h))`,
    [hashes.map((h) => h.toString('hex'))],
    PREPARED,
  );
  const byHash = new Map<string, IdentityRow>();
  for (const { token_hash, ...row } of rows) byHash.set(token_hash.toString('hex'), row);
  return hashes.map((h) => byHash.get(h.toString('hex')) ?? null);
}

/** The statement (unsent) that refuses its transaction with SQLSTATE STALE_TOKEN unless each
 * member still holds the token hash given with it (sql/functions/member_tokens_check.sql). */
export function checkMemberTokens(sql: Tx, members: { id: number; tokenHash: Buffer }[]) {
  return sql.unsafe(
    'SELECT member_tokens_check($1::bigint[], $2::text[])',
    [members.map((m) => m.id), members.map((m) => m.tokenHash.toString('hex'))],
    PREPARED,
  );
}

/** What member_tokens_check raises: a member's token is no longer the one it wrote with (401). */
export const STALE_TOKEN = 'CM401';

export async function findById(sql: Tx, id: number): Promise<IdentityRow | null> {
  const rows = await sql.unsafe<IdentityRow[]>(`SELECT ${COLUMNS} FROM identities WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function findByInviteCode(sql: Tx, code: string): Promise<IdentityRow | null> {
  const rows = await sql.unsafe<IdentityRow[]>(`SELECT ${COLUMNS} FROM identities WHERE invite_code = $1`, [code]);
  return rows[0] ?? null;
}

/** Newest first; `beforeId` is the keyset cursor. */
export async function listIdentities(sql: Sql, limit: number, beforeId: number | null): Promise<IdentityRow[]> {
  return sql.unsafe<IdentityRow[]>(`SELECT ${COLUMNS} FROM identities WHERE ($1::bigint IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`, [
    beforeId,
    limit,
  ]);
}

export async function recordVisit(sql: Sql, id: number, at: Date, zhoLevel: string): Promise<IdentityRow | null> {
  const rows = await sql.unsafe<IdentityRow[]>(
    `UPDATE identities SET visits = visits + 1, last_visit_at = $2, zho_level = $3 WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, at, zhoLevel],
  );
  return rows[0] ?? null;
}

/** The stored hashes of valid member tokens, the most recently active members first. */
export async function recentTokenHashes(sql: Tx, limit: number): Promise<Buffer[]> {
  const rows = await sql<{ h: Buffer }[]>`
    SELECT token_hash AS h FROM identities WHERE token_hash IS NOT NULL
     ORDER BY GREATEST(last_heartbeat_at, last_visit_at, joined_at) DESC NULLS LAST, id DESC LIMIT ${limit}`;
  return rows.map((r) => r.h);
}

export async function replaceTokenHash(sql: Tx, id: number, hash: Buffer | null): Promise<void> {
  await sql`UPDATE identities SET token_hash = ${hash} WHERE id = ${id}`;
}

export async function countIdentities(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM identities`;
  return row?.n ?? 0;
}

// Guests ---------------------------------------------------------------------------------------

export async function reserveGuestBlock(sql: Sql): Promise<number> {
  const [row] = await sql<{ start: string }[]>`SELECT nextval('guest_block_seq') AS start`;
  return Number(row?.start);
}

export async function guestEnded(sql: Sql, guestNumber: number): Promise<boolean> {
  const [row] = await sql<{ ended: boolean }[]>`SELECT ended_at IS NOT NULL AS ended FROM guests WHERE number = ${guestNumber}`;
  return row?.ended ?? false;
}

/** Claims a provisional guest number for its first writer: true for exactly one caller. */
export async function claimGuestNumber(sql: Sql, guestNumber: number): Promise<boolean> {
  const rows = await sql`INSERT INTO guests (number) VALUES (${guestNumber}) ON CONFLICT (number) DO NOTHING RETURNING 1`;
  return rows.length === 1;
}

/** The number a provisional token claimed, and whether that guest has ended (registration). */
export async function guestClaim(sql: Sql, tokenHash: Buffer): Promise<{ guestNumber: number; ended: boolean } | null> {
  const [row] = await sql<{ n: string; ended: boolean }[]>`
    SELECT c.guest_number AS n, g.ended_at IS NOT NULL AS ended
      FROM guest_claims c LEFT JOIN guests g ON g.number = c.guest_number
     WHERE c.token_hash = ${tokenHash}`;
  return row ? { guestNumber: Number(row.n), ended: row.ended } : null;
}

/** Records a token's number, once: the number recorded first, whoever recorded it (a statement of
 * its own, so it sees a racing writer's committed claim). */
export async function recordGuestClaim(sql: Sql, tokenHash: Buffer, guestNumber: number): Promise<number> {
  const mine = await sql<{ n: string }[]>`INSERT INTO guest_claims (token_hash, guest_number) VALUES (${tokenHash}, ${guestNumber})
    ON CONFLICT (token_hash) DO NOTHING RETURNING guest_number AS n`;
  if (mine[0]) return Number(mine[0].n);
  const [theirs] = await sql<{ n: string }[]>`SELECT guest_number AS n FROM guest_claims WHERE token_hash = ${tokenHash}`;
  return Number(theirs?.n);
}

/** Creates the guest's row on its first write (anonymous reads write nothing). */
export async function ensureGuest(tx: Tx, guestNumber: number, label: string | null): Promise<void> {
  await tx`INSERT INTO guests (number, label) VALUES (${guestNumber}, ${label})
           ON CONFLICT (number) DO UPDATE SET label = COALESCE(EXCLUDED.label, guests.label)`;
}

/** Carries a guest's activity over to the new identity and ends the guest (DECISIONS.md). */
/**
 * Ends a guest and moves its messages and points to the identity, once: the guest row is claimed
 * only while it is not ended, so of registrations racing with one guest token exactly one carries
 * its activity over (the row lock makes the others see it ended). Returns whether this one did.
 */
export async function mergeGuest(tx: Tx, guestNumber: number, identityId: number, at: Date): Promise<boolean> {
  const claimed = await tx`INSERT INTO guests (number, merged_into, ended_at) VALUES (${guestNumber}, ${identityId}, ${at})
           ON CONFLICT (number) DO UPDATE SET merged_into = EXCLUDED.merged_into, ended_at = EXCLUDED.ended_at
           WHERE guests.ended_at IS NULL
           RETURNING number`;
  if (claimed.length === 0) return false;
  await tx`UPDATE identities SET guest_number = ${guestNumber} WHERE id = ${identityId}`;
  const messages = await tx`UPDATE chat_messages SET author_id = ${identityId} WHERE guest_number = ${guestNumber} AND author_id IS NULL`;
  const points = await tx`UPDATE point_events SET identity_id = ${identityId} WHERE guest_number = ${guestNumber} AND identity_id IS NULL`;
  // Carried over only when there was something to carry (DECISIONS.md "Identities and numbers").
  return messages.count + points.count > 0;
}
