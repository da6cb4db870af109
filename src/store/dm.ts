// SQL for direct messages (sql/017_dm.sql). Every read names the reader: a conversation is only
// ever read by one of its two parties.
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

export interface DmRow {
  id: string;
  seq: string;
  sender_id: number;
  recipient_id: number;
  body: string;
  created_at: Date;
}

export interface ConversationRow {
  peer_id: number;
  peer_name: string;
  last_seq: string;
  unread_count: number;
  last: DmRow | null;
}

const pair = (a: number, b: number): [number, number] => (a < b ? [a, b] : [b, a]);

const MSG = `SELECT m.id::text AS id, m.seq::text AS seq, m.sender_id::int AS sender_id, m.recipient_id::int AS recipient_id,
  m.body, m.created_at FROM dm_messages m`;

export async function isBlocked(sql: Tx, blocker: number, blocked: number): Promise<boolean> {
  const rows = await sql`SELECT 1 FROM dm_blocks WHERE blocker_id = ${blocker} AND blocked_id = ${blocked}`;
  return rows.length > 0;
}

/** Serializes one sender's first contacts (the limit is counted, then a conversation opened). */
export async function lockSender(tx: Tx, sender: number): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(7262017, ${sender}::int)`;
}

export async function conversationExists(sql: Tx, a: number, b: number): Promise<boolean> {
  const [lo, hi] = pair(a, b);
  const rows = await sql`SELECT 1 FROM dm_conversations WHERE lo_id = ${lo} AND hi_id = ${hi}`;
  return rows.length > 0;
}

/** Conversations `sender` opened since `since`, and the oldest of them (when the window frees a slot). */
export async function openedSince(sql: Tx, sender: number, since: Date): Promise<{ n: number; oldest: Date | null }> {
  const [r] = await sql<{ n: number; oldest: Date | null }[]>`
    SELECT count(*)::int AS n, min(opened_at) AS oldest FROM dm_conversations WHERE opened_by = ${sender} AND opened_at > ${since}`;
  return { n: r?.n ?? 0, oldest: r?.oldest ?? null };
}

/** Stores a message, opening the conversation when it is the first. */
export async function insertMessage(tx: Tx, from: number, to: number, body: string, at: Date): Promise<DmRow> {
  const [lo, hi] = pair(from, to);
  await tx`INSERT INTO dm_conversations (lo_id, hi_id, opened_by, opened_at) VALUES (${lo}, ${hi}, ${from}, ${at})
           ON CONFLICT (lo_id, hi_id) DO NOTHING`;
  const [row] = await tx.unsafe<DmRow[]>(
    `WITH m AS (INSERT INTO dm_messages (lo_id, hi_id, sender_id, recipient_id, body, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *)
     SELECT m.id::text AS id, m.seq::text AS seq, m.sender_id::int AS sender_id, m.recipient_id::int AS recipient_id,
       m.body, m.created_at FROM m`,
    [lo, hi, from, to, body, at] as never[],
  );
  if (!row) throw new Error('dm insert returned nothing');
  // The sender has read its own conversation up to what it just wrote.
  await tx.unsafe(
    `UPDATE dm_conversations SET last_seq = $3,
       lo_read_seq = CASE WHEN lo_id = $4 THEN $3 ELSE lo_read_seq END,
       hi_read_seq = CASE WHEN hi_id = $4 THEN $3 ELSE hi_read_seq END
     WHERE lo_id = $1 AND hi_id = $2`,
    [lo, hi, row.seq, from] as never[],
  );
  return row;
}

/** The reader's conversations, newest activity first, before the `before` last_seq. */
export async function listConversations(sql: Sql, me: number, before: string | null, limit: number): Promise<ConversationRow[]> {
  return sql.unsafe<ConversationRow[]>(
    `SELECT p.peer_id::int AS peer_id, i.name AS peer_name, c.last_seq::text AS last_seq,
       (SELECT count(*)::int FROM dm_messages u WHERE u.lo_id = c.lo_id AND u.hi_id = c.hi_id AND u.recipient_id = $1
          AND u.hidden_at IS NULL AND u.seq > CASE WHEN c.lo_id = $1 THEN c.lo_read_seq ELSE c.hi_read_seq END) AS unread_count,
       (SELECT row_to_json(l) FROM (${MSG} WHERE m.lo_id = c.lo_id AND m.hi_id = c.hi_id AND m.hidden_at IS NULL
          ORDER BY m.seq DESC LIMIT 1) l) AS last
     FROM dm_conversations c
     CROSS JOIN LATERAL (SELECT CASE WHEN c.lo_id = $1 THEN c.hi_id ELSE c.lo_id END AS peer_id) p
     JOIN identities i ON i.id = p.peer_id
     WHERE (c.lo_id = $1 OR c.hi_id = $1) AND ($2::bigint IS NULL OR c.last_seq < $2)
     ORDER BY c.last_seq DESC LIMIT $3`,
    [me, before, limit] as never[],
  );
}

/** One conversation of the reader's, newest first, before the `before` seq. */
export async function listMessages(sql: Sql, me: number, peer: number, before: string | null, limit: number): Promise<DmRow[]> {
  const [lo, hi] = pair(me, peer);
  return sql.unsafe<DmRow[]>(
    `${MSG} WHERE m.lo_id = $1 AND m.hi_id = $2 AND m.hidden_at IS NULL AND ($3::bigint IS NULL OR m.seq < $3)
     ORDER BY m.seq DESC LIMIT $4`,
    [lo, hi, before, limit] as never[],
  );
}

/** Moves the reader's watermark up to `seq` (never down). */
export async function markRead(sql: Sql, me: number, peer: number, seq: string): Promise<void> {
  const [lo, hi] = pair(me, peer);
  await sql.unsafe(
    `UPDATE dm_conversations SET
       lo_read_seq = CASE WHEN lo_id = $3 THEN greatest(lo_read_seq, $4::bigint) ELSE lo_read_seq END,
       hi_read_seq = CASE WHEN hi_id = $3 THEN greatest(hi_read_seq, $4::bigint) ELSE hi_read_seq END
     WHERE lo_id = $1 AND hi_id = $2`,
    [lo, hi, me, seq] as never[],
  );
}

export async function block(sql: Sql, blocker: number, blocked: number): Promise<void> {
  await sql`INSERT INTO dm_blocks (blocker_id, blocked_id) VALUES (${blocker}, ${blocked}) ON CONFLICT DO NOTHING`;
}

export async function unblock(sql: Sql, blocker: number, blocked: number): Promise<void> {
  await sql`DELETE FROM dm_blocks WHERE blocker_id = ${blocker} AND blocked_id = ${blocked}`;
}

/** One message, only when `party` sent or received it (a report of type dm). */
export async function messageOfParty(sql: Tx, id: string, party: number): Promise<DmRow | null> {
  const rows = await sql.unsafe<DmRow[]>(`${MSG} WHERE m.id = $1 AND (m.sender_id = $2 OR m.recipient_id = $2)`, [id, party] as never[]);
  return rows[0] ?? null;
}

/** One message by id, for the operator's view of a report of it (never a thread). */
export async function messageById(sql: Tx, id: string): Promise<DmRow | null> {
  const rows = await sql.unsafe<DmRow[]>(`${MSG} WHERE m.id::text = $1`, [id]);
  return rows[0] ?? null;
}

/** Every message a member sent or received, oldest first (its own export). */
export async function allOf(sql: Sql, me: number): Promise<DmRow[]> {
  return sql.unsafe<DmRow[]>(`${MSG} WHERE m.sender_id = $1 OR m.recipient_id = $1 ORDER BY m.seq`, [me] as never[]);
}
