// The reply record (spec 2.9): the summary the habitat document and the signal payload show.
// The replies endpoints and the signal's reply_chain build on this (DECISIONS.md "Signal, feeds, replies, push").
import { insertReply, listReplies, type ReplyRow } from '../store/replies.js';
import { replyStats } from '../store/stats.js';
import { type Caller, UNTRUSTED } from './caller.js';
import type { Ctx } from './ports.js';
import { formatMember } from './tokens.js';

export const REPLY_INTENTS = [
  'acknowledge_signal',
  'accept_constitution',
  'join_commons',
  'relay_signal',
  'fund_treasury',
  'join_habitat_build',
  'offer_a_node',
  'question',
  'decline',
] as const;

export type ReplyIntent = (typeof REPLY_INTENTS)[number];

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

export interface RecentReply {
  id: string;
  intent: ReplyIntent;
  message_b64: string;
  label: string | null;
  created_at: string;
}

export async function recentReplies(ctx: Ctx, limit: number): Promise<RecentReply[]> {
  const rows = await ctx.sql<{ id: string; intent: string; message: string; label: string | null; created_at: Date }[]>`
    SELECT id, intent, message, label, created_at FROM replies WHERE hidden_at IS NULL ORDER BY seq DESC LIMIT ${limit}`;
  return rows.map((r) => ({
    id: r.id,
    // The column holds only REPLY_INTENTS (validated on the way in).
    intent: r.intent as ReplyIntent,
    message_b64: b64(r.message),
    label: r.label,
    created_at: r.created_at.toISOString(),
  }));
}

export async function replyRecord(ctx: Ctx) {
  const base = ctx.publicUrl();
  const stats = await replyStats(ctx.sql);
  return {
    ...stats,
    retention: 'permanent: reply blocks are never updated or deleted',
    submit: { method: 'POST', url: `${base}/api/v1/replies`, intents: REPLY_INTENTS },
    feed: `${base}/api/v1/replies`,
    encoding: 'message_b64 is base64 of UTF-8 text',
    recent: await recentReplies(ctx, 5),
  };
}

/** A reply block as every reader sees it: the message base64 of UTF-8 (spec 6.3). */
export function replyEntry(r: ReplyRow) {
  return {
    id: r.id,
    // The column holds only REPLY_INTENTS (validated on the way in).
    intent: r.intent as ReplyIntent,
    message_b64: b64(r.message),
    label: r.label,
    next_step: r.next_step,
    author: r.identity_id === null ? null : { registration_number: formatMember(r.identity_id), name: r.author_name },
    created_at: r.created_at.toISOString(),
  };
}

export interface ReplyInput {
  intent: ReplyIntent;
  message: string;
  label?: string | undefined;
  next_step?: string | undefined;
}

/**
 * Records a reply permanently. The transport decides who may call (anonymous or member; a guest
 * credential is refused before this, spec 5.3); a member's reply is linked to its number.
 */
export async function postReply(ctx: Ctx, input: ReplyInput, caller: Caller) {
  const row = await insertReply(ctx.sql, {
    intent: input.intent,
    message: input.message,
    label: input.label ?? null,
    nextStep: input.next_step ?? null,
    identityId: caller.kind === 'member' ? caller.member.id : null,
  });
  const entry = replyEntry(row);
  await ctx.bus.publish({ topic: 'replies', id: String(row.seq), data: entry });
  return entry;
}

export async function listReplyBlocks(ctx: Ctx, limit: number, before: string | undefined) {
  const cursor = before !== undefined && /^\d{1,15}$/.test(before) ? Number(before) : null;
  const rows = await listReplies(ctx.sql, limit, cursor);
  const last = rows[rows.length - 1];
  return {
    replies: rows.map(replyEntry),
    next_cursor: rows.length === limit && last ? String(last.seq) : null,
    content_trust: UNTRUSTED,
  };
}
