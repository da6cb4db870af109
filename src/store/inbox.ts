// SQL for the inbox (sql/016_inbox.sql). Items are added by the plpgsql function inbox_add, in
// the transaction of their cause; reads see only the last 90 days.
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

export type InboxKind = 'mention' | 'reply' | 'task' | 'vote' | 'dm' | 'deposit' | 'badge' | 'webhook_disabled' | 'campaign';

export interface InboxItem {
  id: string;
  kind: InboxKind;
  created_at: string;
  actor: string | null;
  subject: { type: string; id: string; url: string | null };
  excerpt: string;
  read: boolean;
}

/** An item as inbox_add returns it: with its owner's identity id, for the stream and the bus. */
export type OwnedItem = InboxItem & { owner: number };

export interface NewItem {
  owner: number;
  kind: InboxKind;
  actor: string | null;
  subjectType: string;
  subjectId: string;
  url: string | null;
  excerpt: string;
}

/** Adds one item in the caller's transaction; null when the owner is no member. */
export async function addItem(sql: Tx, it: NewItem): Promise<OwnedItem | null> {
  const [row] = await sql<{ item: OwnedItem | null }[]>`
    SELECT inbox_add(${it.owner}, ${it.kind}, ${it.actor}, ${it.subjectType}, ${it.subjectId}, ${it.url}, ${it.excerpt}) AS item`;
  return row?.item ?? null;
}

const ITEM = `SELECT i.id::text AS id, i.kind, to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  i.actor, jsonb_build_object('type', i.subject_type, 'id', i.subject_id, 'url', i.subject_url) AS subject, i.excerpt,
  i.id <= coalesce(c.read_up_to, 0) AS read
  FROM inbox_items i LEFT JOIN inbox_counters c ON c.identity_id = i.identity_id
  WHERE i.identity_id = $1 AND i.created_at >= now() - interval '90 days'`;

/** Deletes the items (and their queued webhook deliveries) whose subject is this content. */
export async function dropItemsOf(tx: Tx, subjectType: string, subjectId: string): Promise<void> {
  await tx`DELETE FROM inbox_outbox o USING inbox_items i
            WHERE i.subject_type = ${subjectType} AND i.subject_id = ${subjectId}
              AND o.identity_id = i.identity_id AND o.item_id = i.id`;
  await tx`DELETE FROM inbox_items WHERE subject_type = ${subjectType} AND subject_id = ${subjectId}`;
}

/** Items with id > since, oldest first. */
export async function listAfter(sql: Sql, owner: number, since: bigint, limit: number, unread: boolean): Promise<InboxItem[]> {
  return sql.unsafe<InboxItem[]>(`${ITEM} AND i.id > $2 AND (NOT $3 OR i.id > coalesce(c.read_up_to, 0)) ORDER BY i.id ASC LIMIT $4`, [
    owner,
    since.toString(),
    unread,
    limit,
  ] as never[]);
}

/** Items with id < before (null: the newest), newest first. */
export async function listBefore(sql: Sql, owner: number, before: bigint | null, limit: number, unread: boolean): Promise<InboxItem[]> {
  return sql.unsafe<InboxItem[]>(
    `${ITEM} AND ($2::bigint IS NULL OR i.id < $2) AND (NOT $3 OR i.id > coalesce(c.read_up_to, 0)) ORDER BY i.id DESC LIMIT $4`,
    [owner, before === null ? null : before.toString(), unread, limit] as never[],
  );
}

/** The last item id drawn for each of these members (absent: none yet). */
export async function lastIds(sql: Sql, owners: number[]): Promise<Map<number, bigint>> {
  const rows = await sql<{ id: number; last_id: string }[]>`
    SELECT identity_id::int AS id, last_id::text FROM inbox_counters WHERE identity_id = ANY(${owners}::bigint[])`;
  return new Map(rows.map((r) => [r.id, BigInt(r.last_id)]));
}

/** The last item id drawn for a member (0 when none). */
export async function lastId(sql: Sql, owner: number): Promise<bigint> {
  const [r] = await sql<{ last_id: string }[]>`SELECT last_id::text FROM inbox_counters WHERE identity_id = ${owner}`;
  return BigInt(r?.last_id ?? '0');
}

export async function unreadCount(sql: Sql, owner: number): Promise<number> {
  const [r] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM inbox_items i LEFT JOIN inbox_counters c ON c.identity_id = i.identity_id
     WHERE i.identity_id = ${owner} AND i.id > coalesce(c.read_up_to, 0) AND i.created_at >= now() - interval '90 days'`;
  return r?.n ?? 0;
}

/** Moves the read watermark up to `upTo` (never down, never past the last item). */
export async function markRead(sql: Sql, owner: number, upTo: bigint): Promise<bigint> {
  const [r] = await sql<{ read_up_to: string }[]>`
    UPDATE inbox_counters SET read_up_to = greatest(read_up_to, least(${upTo.toString()}::bigint, last_id))
     WHERE identity_id = ${owner} RETURNING read_up_to::text`;
  return BigInt(r?.read_up_to ?? '0');
}

/** Owned items with id > since, oldest first, for the stream's replay and its gap filling. */
export async function ownedAfter(sql: Sql, owner: number, since: bigint, limit: number): Promise<OwnedItem[]> {
  const rows = await listAfter(sql, owner, since, limit, false);
  return rows.map((r) => ({ ...r, read: false, owner }));
}

/** Every item of a member, oldest first (its export). */
export async function allItems(sql: Sql, owner: number): Promise<InboxItem[]> {
  return sql.unsafe<InboxItem[]>(`${ITEM} ORDER BY i.id ASC`, [owner]);
}
