// SQL for the inbox webhook and its outbox (sql/016_inbox.sql). Rows are queued by inbox_add in
// the transaction of their item; only the lowest id of each member is ever claimed, so a member's
// items reach its receiver in id order.
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

export interface WebhookRow {
  identity_id: number;
  callback_url: string;
  consecutive_failures: number;
  disabled_at: Date | null;
  last_delivery_at: Date | null;
  last_status: string | null;
  created_at: Date;
}

export interface DueRow {
  identity_id: number;
  item_id: string;
  body: string;
  attempts: number;
  first_at: Date;
  callback_url: string;
  secret: string;
}

const COLS = `identity_id::int AS identity_id, callback_url, consecutive_failures, disabled_at, last_delivery_at, last_status, created_at`;

/** One webhook per member: a PUT replaces it and enables it again. */
export async function upsert(sql: Sql, owner: number, url: string, secret: string): Promise<WebhookRow> {
  const [row] = await sql.unsafe<WebhookRow[]>(
    `INSERT INTO inbox_webhooks (identity_id, callback_url, secret) VALUES ($1, $2, $3)
     ON CONFLICT (identity_id) DO UPDATE SET callback_url = EXCLUDED.callback_url, secret = EXCLUDED.secret,
       consecutive_failures = 0, disabled_at = NULL, last_status = NULL, created_at = now()
     RETURNING ${COLS}`,
    [owner, url, secret] as never[],
  );
  if (!row) throw new Error('upsert inbox_webhooks returned nothing');
  return row;
}

export async function find(sql: Sql, owner: number): Promise<WebhookRow | null> {
  const rows = await sql.unsafe<WebhookRow[]>(`SELECT ${COLS} FROM inbox_webhooks WHERE identity_id = $1`, [owner] as never[]);
  return rows[0] ?? null;
}

/** Removes the webhook and every delivery still queued for it. */
export async function remove(sql: Sql, owner: number): Promise<boolean> {
  return sql.begin(async (tx) => {
    await tx`DELETE FROM inbox_outbox WHERE identity_id = ${owner}`;
    const rows = await tx`DELETE FROM inbox_webhooks WHERE identity_id = ${owner} RETURNING 1`;
    return rows.length > 0;
  }) as Promise<boolean>;
}

/** Claims due heads (each member's lowest queued id) for `leaseMs` and counts the attempt. */
export async function claimDue(sql: Sql, limit: number, leaseMs: number): Promise<DueRow[]> {
  return sql<DueRow[]>`
    WITH heads AS (
      SELECT DISTINCT ON (identity_id) identity_id, item_id, next_at FROM inbox_outbox ORDER BY identity_id, item_id),
    due AS (
      SELECT o.identity_id, o.item_id FROM inbox_outbox o
        JOIN heads h ON h.identity_id = o.identity_id AND h.item_id = o.item_id
       WHERE h.next_at <= now() ORDER BY h.next_at LIMIT ${limit} FOR UPDATE OF o SKIP LOCKED)
    UPDATE inbox_outbox o SET attempts = o.attempts + 1, next_at = now() + make_interval(secs => ${leaseMs / 1000})
      FROM due, inbox_webhooks w
     WHERE o.identity_id = due.identity_id AND o.item_id = due.item_id AND w.identity_id = o.identity_id AND w.disabled_at IS NULL
    RETURNING o.identity_id::int AS identity_id, o.item_id::text AS item_id, o.body, o.attempts, o.first_at, w.callback_url, w.secret`;
}

export async function done(sql: Sql, owner: number, itemId: string): Promise<void> {
  await sql`DELETE FROM inbox_outbox WHERE identity_id = ${owner} AND item_id = ${itemId}`;
}

export async function retryAfter(sql: Sql, owner: number, itemId: string, ms: number): Promise<void> {
  await sql`UPDATE inbox_outbox SET next_at = now() + make_interval(secs => ${ms / 1000})
             WHERE identity_id = ${owner} AND item_id = ${itemId}`;
}

export async function recordSuccess(sql: Sql, owner: number, status: string): Promise<void> {
  await sql`UPDATE inbox_webhooks SET consecutive_failures = 0, last_delivery_at = now(), last_status = ${status}
             WHERE identity_id = ${owner}`;
}

/** Counts a failed try; returns the failures in a row (null when the webhook is gone). */
export async function recordFailure(sql: Sql, owner: number, status: string): Promise<number | null> {
  const [r] = await sql<{ n: number }[]>`
    UPDATE inbox_webhooks SET consecutive_failures = consecutive_failures + 1, last_status = ${status}
     WHERE identity_id = ${owner} AND disabled_at IS NULL RETURNING consecutive_failures AS n`;
  return r?.n ?? null;
}

/** Disables the webhook and drops its queue, in the caller's transaction (once: false if it was). */
export async function disable(tx: Tx, owner: number): Promise<boolean> {
  const rows = await tx`UPDATE inbox_webhooks SET disabled_at = now() WHERE identity_id = ${owner} AND disabled_at IS NULL RETURNING 1`;
  await tx`DELETE FROM inbox_outbox WHERE identity_id = ${owner}`;
  return rows.length > 0;
}

export async function pending(sql: Sql): Promise<{ n: number; dueInMs: number | null }> {
  const [r] = await sql<{ n: number; due_in_ms: number | null }[]>`
    SELECT count(*)::int AS n, (extract(epoch FROM min(next_at) - now()) * 1000)::float8 AS due_in_ms FROM inbox_outbox`;
  return { n: r?.n ?? 0, dueInMs: r?.due_in_ms ?? null };
}
