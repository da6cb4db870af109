// The inbox (DECISIONS.md "Inbox: what concerns one agent, pushed to it"): items are added inside
// the transaction of the event that causes them (`addItems` takes that transaction), and
// announced on the bus once it has committed (`announce`), for the stream's `inbox` topic.
import type { IdentityRow } from '../store/identities.js';
import type { InboxItem, NewItem, OwnedItem } from '../store/inbox.js';
import * as store from '../store/inbox.js';
import type { Tx } from '../store/ledger.js';
import { UNTRUSTED } from './caller.js';
import { fail } from './errors.js';
import type { Ctx } from './ports.js';

export type { InboxItem, InboxKind, NewItem, OwnedItem } from '../store/inbox.js';

export const INBOX_TOPIC = 'inbox';
export const EXCERPT_MAX = 280;

/** The first 280 characters of a causing text, on one line. */
export const excerpt = (text: string): string => text.replace(/\s+/g, ' ').trim().slice(0, EXCERPT_MAX);

/** Adds items in the caller's transaction; items for no member (a mistyped mention) are dropped. */
export async function addItems(tx: Tx, items: NewItem[]): Promise<OwnedItem[]> {
  const out: OwnedItem[] = [];
  // In owner order, so concurrent writers lock members' inbox counters in one order (no deadlock).
  for (const it of [...items].sort((x, y) => x.owner - y.owner)) {
    const added = await store.addItem(tx, it);
    if (added) out.push(added);
  }
  return out;
}

/** Publishes committed items to every node (the stream topic). A lost publish is filled from the
 * database by the next item of the same member (src/transport/ws/inbox-feed.ts). */
export async function announce(ctx: Ctx, items: OwnedItem[]): Promise<void> {
  for (const item of items) {
    try {
      await ctx.bus.publish({ topic: INBOX_TOPIC, id: item.id, data: item });
    } catch (err) {
      ctx.log.warn({ err }, 'inbox: publishing to the bus failed');
    }
  }
}

const cursor = (v: string | undefined, field: string): bigint | null => {
  if (v === undefined) return null;
  if (!/^\d{1,18}$/.test(v))
    return fail('VALIDATION_FAILED', `${field} is an item id`, { fields: [{ path: field, message: 'a decimal item id' }] });
  return BigInt(v);
};

export interface InboxQuery {
  since?: string | undefined;
  before?: string | undefined;
  limit: number;
  unread?: boolean | undefined;
}

/**
 * With `since`: items after it, oldest first, and next_cursor is the `since` of the next page.
 * Without: the newest page (or the one before `before`), in chronological order, and next_cursor
 * is the `before` of the older page.
 */
export async function list(ctx: Ctx, me: IdentityRow, q: InboxQuery) {
  const since = cursor(q.since, 'since');
  const before = cursor(q.before, 'before');
  const unread = q.unread ?? false;
  let items: InboxItem[];
  let next: string | null;
  if (since !== null) {
    const rows = await store.listAfter(ctx.sql, me.id, since, q.limit + 1, unread);
    items = rows.slice(0, q.limit);
    next = rows.length > q.limit ? (items.at(-1)?.id ?? null) : null;
  } else {
    const rows = await store.listBefore(ctx.sql, me.id, before, q.limit + 1, unread);
    items = rows.slice(0, q.limit).reverse();
    next = rows.length > q.limit ? (items[0]?.id ?? null) : null;
  }
  const unread_count = await store.unreadCount(ctx.sql, me.id);
  return { items, next_cursor: next, unread_count, content_trust: UNTRUSTED };
}

export async function markRead(ctx: Ctx, me: IdentityRow, upTo: string) {
  const to = cursor(upTo, 'up_to') ?? 0n;
  const readUpTo = await store.markRead(ctx.sql, me.id, to);
  return { read_up_to: readUpTo.toString(), unread_count: await store.unreadCount(ctx.sql, me.id) };
}

/** Items after `since` for one member, for the stream's replay and gap filling. */
export const ownedAfter = (ctx: Ctx, owner: number, since: bigint, limit: number) => store.ownedAfter(ctx.sql, owner, since, limit);

/** The last item id drawn for each of these members. */
export const lastIds = (ctx: Ctx, owners: number[]) => store.lastIds(ctx.sql, owners);

/** The last item id drawn for a member. */
export const lastId = (ctx: Ctx, owner: number) => store.lastId(ctx.sql, owner);

/** A member's whole inbox (the export). */
export const allItems = (ctx: Ctx, owner: number) => store.allItems(ctx.sql, owner);

/** A link to a subject on this service. */
export const link = (ctx: Ctx, path: string): string => `${ctx.publicUrl()}${path}`;
