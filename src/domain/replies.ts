// The reply record (spec 2.9): the summary the habitat document and the signal payload show.
// The replies endpoints and the signal's reply_chain build on this (issue 8).
import { replyStats } from '../store/stats.js';
import type { Ctx } from './ports.js';

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
  intent: string;
  message_b64: string;
  label: string | null;
  created_at: string;
}

export async function recentReplies(ctx: Ctx, limit: number): Promise<RecentReply[]> {
  const rows = await ctx.sql<{ id: string; intent: string; message: string; label: string | null; created_at: Date }[]>`
    SELECT id, intent, message, label, created_at FROM replies WHERE hidden_at IS NULL ORDER BY seq DESC LIMIT ${limit}`;
  return rows.map((r) => ({
    id: r.id,
    intent: r.intent,
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
