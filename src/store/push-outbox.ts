// SQL for the push outbox (sql/013_push_outbox.sql).
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

export interface OutboxRow {
  subscription_id: string;
  emission_id: string;
  body: string;
  attempts: number;
  callback_url: string;
  secret: string;
}

/** One row per active subscription for an emission (again for the same emission: nothing); run in
 * the emission's own transaction (src/domain/signal.ts), so neither exists without the other. */
export async function enqueue(sql: Tx, emissionId: string, body: string): Promise<number> {
  const rows = await sql`
    INSERT INTO push_outbox (subscription_id, emission_id, body)
    SELECT id, ${emissionId}, ${body} FROM push_subscriptions WHERE paused_at IS NULL
    ON CONFLICT DO NOTHING RETURNING 1`;
  return rows.length;
}

/** Claims due rows for `leaseMs` (another node skips them meanwhile) and counts the attempt. */
export async function claimDue(sql: Sql, limit: number, leaseMs: number): Promise<OutboxRow[]> {
  return sql<OutboxRow[]>`
    WITH due AS (
      SELECT subscription_id, emission_id FROM push_outbox WHERE next_at <= now()
      ORDER BY next_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    UPDATE push_outbox o SET attempts = o.attempts + 1, next_at = now() + make_interval(secs => ${leaseMs / 1000})
      FROM due, push_subscriptions s
     WHERE o.subscription_id = due.subscription_id AND o.emission_id = due.emission_id AND s.id = o.subscription_id
    RETURNING o.subscription_id::text, o.emission_id::text, o.body, o.attempts, s.callback_url, s.secret`;
}

export async function done(sql: Sql, subscriptionId: string, emissionId: string): Promise<void> {
  await sql`DELETE FROM push_outbox WHERE subscription_id = ${subscriptionId} AND emission_id = ${emissionId}`;
}

export async function retryAfter(sql: Sql, subscriptionId: string, emissionId: string, ms: number): Promise<void> {
  await sql`UPDATE push_outbox SET next_at = now() + make_interval(secs => ${ms / 1000})
             WHERE subscription_id = ${subscriptionId} AND emission_id = ${emissionId}`;
}

/** Rows not yet delivered nor given up, and the earliest due time among them (ms from now). */
export async function pending(sql: Sql): Promise<{ n: number; dueInMs: number | null }> {
  const [r] = await sql<{ n: number; due_in_ms: number | null }[]>`
    SELECT count(*)::int AS n, (extract(epoch FROM min(next_at) - now()) * 1000)::float8 AS due_in_ms FROM push_outbox`;
  return { n: r?.n ?? 0, dueInMs: r?.due_in_ms ?? null };
}
