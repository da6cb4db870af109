// Open chat use cases (spec 2.5, 3.4, 5.2): members and guests post, anyone reads. Reads come from
// the node's ChatRoom when it covers the page, else from the database.
import * as store from '../store/chat.js';
import { ensureGuest } from '../store/identities.js';
import { addPoints } from '../store/points.js';
import type { Caller } from './caller.js';
import { UNTRUSTED } from './caller.js';
import { type ChatMessage, toMessage } from './chat-record.js';
import { CHAT_HIDDEN_TOPIC, ChatRoom, chatEvent } from './chat-room.js';
import { fail } from './errors.js';
import type { Ctx } from './ports.js';

export type { ChatMessage };

export interface ChatInput {
  body: string;
  /** A guest's display label; ignored for members, who are shown by their registered name. */
  name?: string | undefined;
}

const rooms = new WeakMap<Ctx, ChatRoom>();

/** Starts this node's chat room (the composition root calls it once). */
export async function openChatRoom(ctx: Ctx): Promise<ChatRoom> {
  const room = new ChatRoom(ctx);
  await room.start();
  rooms.set(ctx, room);
  return room;
}

export async function postChat(ctx: Ctx, caller: Caller, input: ChatInput): Promise<ChatMessage & { content_trust: string }> {
  if (caller.kind === 'anonymous') return fail('REGISTRATION_REQUIRED', 'a guest or member credential is needed to post');
  const guestNumber = caller.kind === 'guest' ? caller.guestNumber : null;
  const label = guestNumber !== null ? (input.name ?? null) : null;
  const at = ctx.clock.now();
  const row = await ctx.sql.begin(async (tx) => {
    // The guest row is created on the guest's first write (DECISIONS.md "Guest issuance").
    if (guestNumber !== null) await ensureGuest(tx, guestNumber, label);
    const authorId = caller.kind === 'member' ? caller.member.id : null;
    const r = await store.insertMessage(tx, { body: input.body, authorId, guestNumber, guestLabel: label, at });
    await addPoints(tx, authorId !== null ? { identityId: authorId } : { guestNumber: guestNumber as number }, 'chat_message', 1, r.id);
    return r;
  });
  const msg = toMessage({
    id: row.id,
    seq: row.seq,
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
  const cached = rooms.get(ctx)?.page(limit, beforeSeq);
  let messages: ChatMessage[];
  let more: boolean;
  if (cached) ({ messages, more } = cached);
  else {
    const rows = await store.listNewest(ctx.sql, limit + 1, beforeSeq);
    more = rows.length > limit;
    messages = rows.slice(0, limit).reverse().map(toMessage);
  }
  const oldest = messages[0];
  return { messages, next_cursor: more && oldest ? String(oldest.seq) : null, content_trust: UNTRUSTED };
}

/** Announces a message the operator hid, so every node's memory drops it (hidden never appear). */
export async function announceHidden(ctx: Ctx, messageId: string): Promise<void> {
  if (!(await store.isHidden(ctx.sql, messageId))) return;
  await ctx.bus.publish({ topic: CHAT_HIDDEN_TOPIC, id: messageId, data: null });
}
