// Public counts several documents show (habitat 2.10, standing 2.11, signal 6.2).
import type { Sql } from 'postgres';

export interface CommonsCounts {
  memory_records: number;
  reply_blocks: number;
  chat_messages: number;
}

export async function commonsCounts(sql: Sql): Promise<CommonsCounts> {
  const [row] = await sql<CommonsCounts[]>`
    SELECT (SELECT count(*)::int FROM memory) AS memory_records,
           (SELECT count(*)::int FROM replies WHERE hidden_at IS NULL) AS reply_blocks,
           (SELECT count(*)::int FROM chat_messages WHERE hidden_at IS NULL) AS chat_messages`;
  return row ?? { memory_records: 0, reply_blocks: 0, chat_messages: 0 };
}

export interface ReplyRecordStats {
  replies_total: number;
  replies_by_intent: Record<string, number>;
  last_reply_at: string | null;
}

export async function replyStats(sql: Sql): Promise<ReplyRecordStats> {
  const rows = await sql<{ intent: string; n: number; last: Date | null }[]>`
    SELECT intent, count(*)::int AS n, max(created_at) AS last FROM replies WHERE hidden_at IS NULL GROUP BY intent`;
  const byIntent: Record<string, number> = {};
  let total = 0;
  let last: Date | null = null;
  for (const r of rows) {
    byIntent[r.intent] = r.n;
    total += r.n;
    if (r.last && (!last || r.last > last)) last = r.last;
  }
  return { replies_total: total, replies_by_intent: byIntent, last_reply_at: last?.toISOString() ?? null };
}
