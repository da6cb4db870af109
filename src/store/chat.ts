// SQL for the open chat (spec 2.5). seq is the order of messages and the stream's replay cursor.
import type { Sql } from 'postgres';
import type { OwnedItem } from './inbox.js';
import { PREPARED } from './prepared.js';

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

// Seq order is not commit order: groups draw their seqs without a lock held through their commit
// (sql/functions/chat_append.sql), so a group may commit before a lower one, and a rolled-back
// group's seqs are gaps for ever. Every reader of seq order after a cursor (the indexer's step, the
// chat room and through it the stream's replay, docs/stream.md) stops at the watermark
// (sql/functions/chat_watermark.sql, `watermark` below): every seq at or below it is committed or
// will never exist. It is read in a statement before the rows, so the rows' snapshot is taken after
// it (listAfter's callers pass it as their bound). Newest-first pages (listNewest) need none: a
// lower seq that commits later is still found paging back.

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

export interface NewChatRow extends NewChat {
  /** Drawn by the caller (gen_random_uuid's format), so each returned seq maps to its message. */
  id: string;
  /** Members the body mentions (parsed once by the writer), stored with the message; the indexer
   * gives them `mention` inbox items. */
  mentions: number[];
  /** The hash of the member token the post was sent with, when the write itself must check that it
   * still names the author (the caller read it from a cache); the message is then refused if not. */
  tokenHash?: Buffer | null;
}

/** A stored message: its seq (what it derives comes later, from the indexer: indexNext). */
export interface StoredChat {
  seq: number;
}

/**
 * Appends messages in the given order, with each guest author's row, in one statement
 * (sql/functions/chat_append.sql: one round trip, one commit, seqs drawn in input order, the
 * group announced until its commit for the watermark). Only ordering and durability: the search columns, the activity point and the
 * mention items are derived after the commit by the indexer (indexNext). The group commit of
 * src/domain/chat.ts calls it with whatever posts arrived together. Returns each message's seq, in
 * input order (null for a message refused because its token no longer names its author).
 */
export async function insertMessages(sql: Sql, ms: NewChatRow[]): Promise<(StoredChat | null)[]> {
  // Within a group the last label a guest gave wins, as it would post by post.
  const guests = new Map<number, string | null>();
  for (const m of ms) if (m.guestNumber !== null) guests.set(m.guestNumber, m.guestLabel ?? guests.get(m.guestNumber) ?? null);
  const rows = await sql.unsafe<{ id: string; seq: number }[]>(
    `SELECT id, seq::float8 AS seq FROM chat_append($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::bigint[],
       $6::text[], $7::timestamptz[], $8::bigint[], $9::text[], $10::text[])`,
    [
      ms.map((m) => m.id),
      ms.map((m) => m.body),
      ms.map((m) => m.authorId),
      ms.map((m) => m.tokenHash?.toString('hex') ?? null),
      ms.map((m) => m.guestNumber),
      ms.map((m) => m.guestLabel),
      ms.map((m) => m.at.toISOString()),
      [...guests.keys()],
      [...guests.values()],
      ms.map((m) => (m.mentions.length > 0 ? m.mentions.join(',') : null)),
    ] as never[],
    PREPARED,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ms.map((m) => {
    const r = byId.get(m.id);
    if (r !== undefined) return { seq: r.seq };
    // Only a row whose token no longer names its author is left out (chat_append).
    if (m.tokenHash) return null;
    throw new Error('chat_append lost a row');
  });
}

/** One indexer step (sql/functions/chat_index_next.sql): what it indexed, committed. */
export interface IndexStep {
  /** The cursor after the step: every message with seq <= upto is indexed. */
  upto: number;
  /** How many messages this step indexed (0: none was waiting). */
  indexed: number;
  /** Their created_at, ms since the epoch, in seq order. */
  ats: number[];
  /** The mention items written, for the stream. */
  items: OwnedItem[];
}

/** Indexes the next messages after the cursor (at most `limit`), with the cursor's advance, in one
 * transaction: each message exactly once, in seq order, on any node. */
export async function indexNext(sql: Sql, limit: number, url: string): Promise<IndexStep> {
  const [row] = await sql.unsafe<{ upto: number; indexed: number; ats: number[]; items: OwnedItem[] }[]>(
    'SELECT upto::float8 AS upto, indexed, ats, items FROM chat_index_next($1::integer, $2::text)',
    [limit, url],
    PREPARED,
  );
  if (!row) throw new Error('chat_index_next returned no row');
  return { upto: row.upto, indexed: row.indexed, ats: row.ats.map(Number), items: row.items };
}

/** The indexer's cursor: every message with seq <= it has its derived records. */
export async function indexedSeq(sql: Sql): Promise<number> {
  const [row] = await sql<{ s: number }[]>`SELECT indexed_seq::float8 AS s FROM chat_index`;
  return row?.s ?? 0;
}

/** Visible messages, newest first, older than `beforeSeq` when given. */
export async function listNewest(sql: Sql, limit: number, beforeSeq: number | null): Promise<ChatRow[]> {
  return sql.unsafe<ChatRow[]>(`${SELECT} WHERE m.hidden_at IS NULL AND ($1::bigint IS NULL OR m.seq < $1) ORDER BY m.seq DESC LIMIT $2`, [
    beforeSeq,
    limit,
  ]);
}

/** Visible messages with afterSeq < seq < beforeSeq, oldest first. Read in seq order after a cursor:
 * beforeSeq must be at most the watermark plus one, read before this (a seq above the watermark may
 * have a lower one still in flight). */
export async function listAfter(sql: Sql, afterSeq: number, limit: number, beforeSeq: number): Promise<ChatRow[]> {
  return sql.unsafe<ChatRow[]>(`${SELECT} WHERE m.hidden_at IS NULL AND m.seq > $1 AND m.seq < $2 ORDER BY m.seq ASC LIMIT $3`, [
    afterSeq,
    beforeSeq,
    limit,
  ]);
}

/** The watermark (sql/functions/chat_watermark.sql): every seq at or below it is committed or will
 * never exist, hidden messages included (0 when the chat is empty). */
export async function watermark(sql: Sql): Promise<number> {
  const [row] = await sql<{ w: number }[]>`SELECT chat_watermark()::float8 AS w`;
  return row?.w ?? 0;
}

/** The watermark once it reaches `upTo`, waiting for the groups in flight below it to commit or roll
 * back; less only when seqs up to `upTo` are not all drawn yet. */
export async function watermarkAt(sql: Sql, upTo: number): Promise<number> {
  const [row] = await sql<{ w: number }[]>`SELECT chat_watermark_wait(${upTo}::bigint)::float8 AS w`;
  return row?.w ?? 0;
}

export async function isHidden(sql: Sql, id: string): Promise<boolean> {
  const [row] = await sql<{ h: boolean }[]>`SELECT hidden_at IS NOT NULL AS h FROM chat_messages WHERE id = ${id}`;
  return row?.h ?? true;
}
