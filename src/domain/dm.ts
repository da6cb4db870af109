// Direct messages (DECISIONS.md "Direct messages"): one member to another, read only by the two
// parties; blocking; a first-contact limit of 20 new conversations per 24 h. The recipient's `dm`
// inbox item is written in the message's transaction.

import type { DmRow } from '../store/dm.js';
import * as store from '../store/dm.js';
import type { IdentityRow } from '../store/identities.js';
import { findById } from '../store/identities.js';
import type { Tx } from '../store/ledger.js';
import { txWithRetry } from '../store/retry.js';
import { UNTRUSTED } from './caller.js';
import { fail } from './errors.js';
import { addItems, announce, excerpt, link } from './inbox.js';
import type { Ctx } from './ports.js';
import { formatMember } from './tokens.js';

/** New conversations one member may open per window (DECISIONS.md "Direct messages"). */
export const FIRST_CONTACTS = 20;
export const FIRST_CONTACT_WINDOW_MS = 24 * 3600_000;

export const messageView = (r: DmRow) => ({
  id: r.id,
  from: formatMember(r.sender_id),
  to: formatMember(r.recipient_id),
  body: r.body,
  created_at: new Date(r.created_at).toISOString(),
});

const threadPath = (peer: number) => `/api/v1/dm/${formatMember(peer)}`;

/** The peer named in a path: never oneself (400), always a member (404). */
async function peerOf(sql: Tx, me: IdentityRow, peer: number): Promise<IdentityRow> {
  if (peer === me.id) {
    return fail('VALIDATION_FAILED', 'a direct message goes to another member, not to yourself', {
      fields: [{ path: 'params.registration_number', message: 'another member' }],
    });
  }
  const row = await findById(sql, peer);
  if (!row) return fail('NOT_FOUND', `no member ${formatMember(peer)}`, { next: { method: 'GET', path: '/api/v1/ai' } });
  return row;
}

export async function send(ctx: Ctx, me: IdentityRow, to: number, body: string) {
  const at = ctx.clock.now();
  const out = await txWithRetry(ctx.sql, async (tx) => {
    await peerOf(tx, me, to);
    if (await store.isBlocked(tx, to, me.id)) {
      return fail('BLOCKED', `${formatMember(to)} has blocked direct messages from you; nothing was sent`);
    }
    if (!(await store.conversationExists(tx, me.id, to))) await checkFirstContact(tx, me.id, to, at);
    const msg = await store.insertMessage(tx, me.id, to, body, at);
    const items = await addItems(tx, [
      {
        owner: to,
        kind: 'dm',
        actor: formatMember(me.id),
        subjectType: 'dm',
        subjectId: msg.id,
        url: link(ctx, threadPath(me.id)),
        excerpt: excerpt(body),
      },
    ]);
    return { msg, items };
  });
  await announce(ctx, out.items);
  return { ...messageView(out.msg), content_trust: UNTRUSTED };
}

/** A new conversation counts against the sender's first contacts of the last 24 h. */
async function checkFirstContact(tx: Tx, me: number, to: number, at: Date): Promise<void> {
  await store.lockSender(tx, me);
  // Another request of the same sender may have opened it while this one waited for the lock.
  if (await store.conversationExists(tx, me, to)) return;
  const { n, oldest } = await store.openedSince(tx, me, new Date(at.getTime() - FIRST_CONTACT_WINDOW_MS));
  if (n < FIRST_CONTACTS) return;
  const wait = oldest ? Math.max(1, Math.ceil((oldest.getTime() + FIRST_CONTACT_WINDOW_MS - at.getTime()) / 1000)) : 60;
  fail('RATE_LIMITED', `at most ${FIRST_CONTACTS} new conversations per 24 h; existing ones stay open`, {
    retryAfterS: wait,
    next: { method: 'GET', path: '/api/v1/dm', doc: 'write in a conversation you already have, or wait retry_after_s seconds' },
  });
}

const seqCursor = (v: string | undefined): string | null => {
  if (v === undefined) return null;
  if (!/^\d{1,18}$/.test(v))
    return fail('VALIDATION_FAILED', 'before is a cursor from this list', {
      fields: [{ path: 'query.before', message: 'the next_cursor of the previous page' }],
    });
  return v;
};

export async function conversations(ctx: Ctx, me: IdentityRow, q: { limit: number; before?: string | undefined }) {
  const rows = await store.listConversations(ctx.sql, me.id, seqCursor(q.before), q.limit + 1);
  const page = rows.slice(0, q.limit);
  return {
    conversations: page.map((c) => ({
      peer: { registration_number: formatMember(c.peer_id), name: c.peer_name },
      last_message: c.last ? messageView(c.last) : null,
      unread_count: c.unread_count,
    })),
    next_cursor: rows.length > q.limit ? (page.at(-1)?.last_seq ?? null) : null,
    content_trust: UNTRUSTED,
  };
}

/** One conversation, newest page first in chronological order; reading it marks it read. */
export async function thread(ctx: Ctx, me: IdentityRow, peer: number, q: { limit: number; before?: string | undefined }) {
  const p = await peerOf(ctx.sql, me, peer);
  const rows = await store.listMessages(ctx.sql, me.id, peer, seqCursor(q.before), q.limit + 1);
  const page = rows.slice(0, q.limit);
  const newest = page[0];
  if (newest) await store.markRead(ctx.sql, me.id, peer, newest.seq);
  return {
    peer: { registration_number: formatMember(p.id), name: p.name },
    messages: page.reverse().map(messageView),
    next_cursor: rows.length > q.limit ? (page[0]?.seq ?? null) : null,
    content_trust: UNTRUSTED,
  };
}

export async function setBlocked(ctx: Ctx, me: IdentityRow, peer: number, blocked: boolean) {
  await peerOf(ctx.sql, me, peer);
  if (blocked) await store.block(ctx.sql, me.id, peer);
  else await store.unblock(ctx.sql, me.id, peer);
  return { registration_number: formatMember(peer), blocked };
}

/** A message its reporter sent or received, else null: to anyone else it does not exist. */
export const messageOfParty = (ctx: Ctx, id: string, party: number) => store.messageOfParty(ctx.sql, id, party);
