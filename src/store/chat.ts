// SQL for the open chat (spec 2.5). seq is the order of messages and the stream's replay cursor.
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

export interface ChatRow {
  id: string;
  seq: number;
  body: string;
  author_id: number | null;
  author_name: string | null;
  guest_number: number | null;
  guest_label: string | null;
  created_at: Date;
}

// Chat inserts take this transaction lock before drawing a seq, so seq order is commit order on
// every node: once seq N is visible, every smaller seq is visible or will never exist. The
// stream's no-gap replay rests on it (docs/stream.md).
const CHAT_SEQ_LOCK = 7262003;

// The author shown is the one the message was posted as: a guest's message stays a guest's
// message after its author registers (the carry-over moves ownership and points, not the text).
const SELECT = `SELECT m.id, m.seq::float8 AS seq, m.body, m.author_id::float8 AS author_id,
  CASE WHEN m.guest_number IS NULL THEN i.name END AS author_name, m.guest_number::float8 AS guest_number,
  m.guest_label, m.created_at
  FROM chat_messages m LEFT JOIN identities i ON i.id = m.author_id`;

export interface NewChat {
  body: string;
  authorId: number | null;
  guestNumber: number | null;
  guestLabel: string | null;
  at: Date;
}

export async function insertMessage(tx: Tx, m: NewChat): Promise<{ id: string; seq: number }> {
  await tx`SELECT pg_advisory_xact_lock(${CHAT_SEQ_LOCK})`;
  const [row] = await tx<{ id: string; seq: number }[]>`
    INSERT INTO chat_messages (body, author_id, guest_number, guest_label, created_at)
    VALUES (${m.body}, ${m.authorId}, ${m.guestNumber}, ${m.guestLabel}, ${m.at})
    RETURNING id, seq::float8 AS seq`;
  if (!row) throw new Error('insert chat_messages returned nothing');
  return row;
}

/** Visible messages, newest first, older than `beforeSeq` when given. */
export async function listNewest(sql: Sql, limit: number, beforeSeq: number | null): Promise<ChatRow[]> {
  return sql.unsafe<ChatRow[]>(`${SELECT} WHERE m.hidden_at IS NULL AND ($1::bigint IS NULL OR m.seq < $1) ORDER BY m.seq DESC LIMIT $2`, [
    beforeSeq,
    limit,
  ]);
}

/** Visible messages with afterSeq < seq < beforeSeq (beforeSeq null: no upper bound), oldest first. */
export async function listAfter(sql: Sql, afterSeq: number, limit: number, beforeSeq: number | null = null): Promise<ChatRow[]> {
  return sql.unsafe<ChatRow[]>(
    `${SELECT} WHERE m.hidden_at IS NULL AND m.seq > $1 AND ($2::bigint IS NULL OR m.seq < $2) ORDER BY m.seq ASC LIMIT $3`,
    [afterSeq, beforeSeq, limit],
  );
}

/** The highest seq drawn so far, hidden messages included (0 when the chat is empty). */
export async function maxSeq(sql: Sql): Promise<number> {
  const [row] = await sql<{ s: number | null }[]>`SELECT max(seq)::float8 AS s FROM chat_messages`;
  return row?.s ?? 0;
}

export async function isHidden(sql: Sql, id: string): Promise<boolean> {
  const [row] = await sql<{ h: boolean }[]>`SELECT hidden_at IS NOT NULL AS h FROM chat_messages WHERE id = ${id}`;
  return row?.h ?? true;
}
