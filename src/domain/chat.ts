// Open chat use cases (spec 2.5, 3.4, 5.2): members and guests post, anyone reads. Reads come from
// the node's ChatRoom when it covers the page, else from the database.
import type { Sql } from 'postgres';
import * as store from '../store/chat.js';
import { GroupCommit } from '../store/group-commit.js';
import type { Caller } from './caller.js';
import { UNTRUSTED } from './caller.js';
import { type ChatMessage, toMessage } from './chat-record.js';
import { CHAT_HIDDEN_TOPIC, ChatRoom, chatEvent } from './chat-room.js';
import { deadMemberToken, fail, isOutage } from './errors.js';
import { announce, link } from './inbox.js';
import { mentionedIds } from './mentions.js';
import type { Ctx } from './ports.js';
import { uuid } from './uuid.js';

export type { ChatMessage };

export interface ChatInput {
  body: string;
  /** A guest's display label; ignored for members, who are shown by their registered name. */
  name?: string | undefined;
}

/** A second group starts beside one committing only once this many posts wait (docs/chat.md):
 * 16 writers fit one group, where two lanes split them into groups of about 5 that each pay a
 * commit's fixed cost (PostgreSQL's CPU per post 20-35% higher, docs/bench-chat-47.md). */
export const CHAT_BESIDE_MIN = 32;

/** Under load a group waits for the posters just answered up to a whole commit's time (at most
 * 2 ms), not half: at 16 writers their round trip through the client is about a commit's time, and
 * half a commit's wait missed them (groups of 8-9 instead of 10-14; docs/bench-chat-47.md). */
export const CHAT_GATHER_SHARE = 1;

/** Starts this node's chat room (the composition root calls it once). */
export async function openChatRoom(ctx: Ctx): Promise<ChatRoom> {
  const room = new ChatRoom(ctx);
  await room.start();
  ctx.services.chatRoom = room;
  ctx.services.chatPosts = new GroupCommit(
    (batch) => store.insertMessages(ctx.sql, batch),
    500,
    (s) => ctx.metrics.chatCommitSeconds.observe(s),
    isOutage,
    // The embedded store runs one statement at a time: a second group would only queue for it.
    ctx.config.databaseUrl ? ctx.config.chatCommitLanes : 1,
    CHAT_BESIDE_MIN,
    CHAT_GATHER_SHARE,
  );
  return room;
}

/** Stops what openChatRoom started (its starter calls it, src/app.ts): the room and the group commit. */
export function closeChatRoom(ctx: Ctx, room: ChatRoom): void {
  if (ctx.services.chatRoom === room) ctx.services.chatRoom = null;
  ctx.services.chatPosts = null;
  room.close();
}

/** Stores one post: through the node's group commit (concurrent posts share one statement and
 * one commit, seqs in submission order within a group; up to CHAT_COMMIT_LANES groups commit at
 * once, in any order: readers of seq order stop at the watermark, src/store/chat.ts), or alone when the chat room is not started. Then wakes the
 * node's chat indexer, which derives the rest from the committed row (indexChat). */
async function storePost(ctx: Ctx, row: store.NewChatRow): Promise<store.StoredChat> {
  const posts = ctx.services.chatPosts;
  const stored = posts ? await posts.submit(row) : ((await store.insertMessages(ctx.sql, [row]))[0] ?? null);
  if (stored === null) return deadMemberToken();
  ctx.services.chatIndexer?.wake();
  return stored;
}

/** How many messages one indexer step takes at most (one statement, one transaction). */
export const CHAT_INDEX_BATCH = 500;

/**
 * One step of the chat indexer (src/actors/chat-indexer.ts; docs/chat.md "Indexing"): the search
 * columns, the activity point (score, badge) and the mention items of the next messages after the
 * cursor, written with the cursor's advance in one transaction (exactly once, in seq order, on any
 * node), then the lag of each observed and the items announced to the stream. Returns how many
 * messages it indexed.
 */
export async function indexChat(ctx: Ctx, limit = CHAT_INDEX_BATCH): Promise<number> {
  const step = await store.indexNext(ctx.sql, limit, link(ctx, '/api/v1/chat'));
  if (step.indexed === 0) return 0;
  ctx.metrics.chatIndexSteps.inc();
  observeLag(ctx, step.ats);
  await announce(ctx, step.items);
  return step.indexed;
}

/**
 * The fault hook CHAT_INDEXER=stall (fault tests only): a step run inside a transaction that, once
 * it has indexed something, never commits (`stalled` is told, and the promise never settles), so
 * the node can be killed between posts' commits and their indexing, mid-step.
 */
export async function indexChatStalled(ctx: Ctx, stalled: (indexed: number) => void): Promise<number> {
  return ctx.sql.begin(async (tx) => {
    const step = await store.indexNext(tx as unknown as Sql, CHAT_INDEX_BATCH, link(ctx, '/api/v1/chat'));
    if (step.indexed === 0) return 0;
    stalled(step.indexed);
    return new Promise<number>(() => {});
  });
}

function observeLag(ctx: Ctx, ats: number[]): void {
  const now = ctx.clock.now().getTime();
  for (const at of ats) ctx.metrics.chatIndexLagSeconds.observe(Math.max(0, now - at) / 1000);
}

/** Changes whenever a page from the newest may read differently (a message settled on this node,
 * its own or another's through the bus, or a hidden one dropped); null when the room is not started.
 * Readers that cache pages watch it. */
export function chatVersion(ctx: Ctx): number | null {
  return ctx.services.chatRoom?.version ?? null;
}

export async function postChat(ctx: Ctx, caller: Caller, input: ChatInput): Promise<ChatMessage & { content_trust: string }> {
  if (caller.kind === 'anonymous') return fail('REGISTRATION_REQUIRED', 'a guest or member credential is needed to post');
  const guestNumber = caller.kind === 'guest' ? caller.guestNumber : null;
  const label = guestNumber !== null ? (input.name ?? null) : null;
  const at = ctx.clock.now();
  const authorId = caller.kind === 'member' ? caller.member.id : null;
  const id = uuid();
  // Mentions are parsed once, here, and stored with the message; the indexer writes their items.
  const mentions = mentionedIds(input.body, authorId);
  const tokenHash = caller.kind === 'member' ? (caller.tokenHash ?? null) : null;
  const { seq } = await storePost(ctx, { id, body: input.body, authorId, tokenHash, guestNumber, guestLabel: label, at, mentions });
  const msg = toMessage({
    id,
    seq,
    body: input.body,
    author_id: caller.kind === 'member' ? caller.member.id : null,
    author_name: caller.kind === 'member' ? caller.member.name : null,
    guest_number: guestNumber,
    guest_label: label,
    created_at: at,
  });
  try {
    await ctx.bus.publish(chatEvent(msg));
  } catch (err) {
    // The message is stored; other nodes settle it from the database with the next message.
    ctx.log.warn({ err }, 'chat: publishing to the bus failed');
  }
  return { ...msg, content_trust: UNTRUSTED };
}

export async function listChat(ctx: Ctx, limit: number, beforeSeq: number | null) {
  const cached = listChatFromMemory(ctx, limit, beforeSeq);
  if (cached) return cached;
  const rows = await store.listNewest(ctx.sql, limit + 1, beforeSeq);
  return chatPageOf(rows.slice(0, limit).reverse().map(toMessage), rows.length > limit, beforeSeq);
}

/** A chat page answered from the node's memory without waiting, or null when memory does not cover it. */
export function listChatFromMemory(ctx: Ctx, limit: number, beforeSeq: number | null) {
  const cached = ctx.services.chatRoom?.page(limit, beforeSeq);
  return cached ? chatPageOf(cached.messages, cached.more, beforeSeq) : null;
}

function chatPageOf(messages: ChatMessage[], more: boolean, beforeSeq: number | null) {
  const oldest = messages[0];
  return {
    messages,
    next_cursor: more && oldest ? String(oldest.seq) : null,
    ...(messages.length === 0 && beforeSeq === null ? { next: EMPTY_CHAT_NEXT } : {}),
    content_trust: UNTRUSTED,
  };
}

/** An empty chat says how to start it (guests may write too). */
const EMPTY_CHAT_NEXT = [
  { method: 'POST', path: '/api/v1/chat', doc: 'no message yet: say hello with {"body": "..."}; guests may write too' },
];

/**
 * The newest messages plus `head`, the seq of the newest message this node has handed on (hidden
 * ones included), read in the same synchronous step as the page, so a message the page has seen
 * with seq <= head and absent from `messages` was hidden (the page for people drops it).
 */
export async function chatSnapshot(ctx: Ctx, limit: number): Promise<{ messages: ChatMessage[]; head: number }> {
  const head = ctx.services.chatRoom?.lastSeq;
  const { messages } = await listChat(ctx, limit, null);
  return { messages, head: head ?? messages.at(-1)?.seq ?? 0 };
}

/** Announces a message the operator hid, so every node's memory drops it (hidden never appear). */
export async function announceHidden(ctx: Ctx, messageId: string): Promise<void> {
  if (!(await store.isHidden(ctx.sql, messageId))) return;
  await ctx.bus.publish({ topic: CHAT_HIDDEN_TOPIC, id: messageId, data: null });
}
