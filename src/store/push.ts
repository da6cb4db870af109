// SQL for push subscriptions (sql/008_signal.sql).
import type { Sql } from 'postgres';

export interface SubscriptionRow {
  id: string;
  identity_id: number;
  callback_url: string;
  secret: string;
  created_at: Date;
  consecutive_failures: number;
  paused_at: Date | null;
  last_delivery_at: Date | null;
  last_status: string | null;
}

const COLS = `id, identity_id::int AS identity_id, callback_url, secret, created_at, consecutive_failures, paused_at,
  last_delivery_at, last_status`;

/** Creates a subscription; subscribing again to the same URL replaces its secret and resumes it. */
export async function upsertSubscription(sql: Sql, identityId: number, callbackUrl: string, secret: string): Promise<SubscriptionRow> {
  const [row] = await sql.unsafe<SubscriptionRow[]>(
    `INSERT INTO push_subscriptions (identity_id, callback_url, secret) VALUES ($1, $2, $3)
     ON CONFLICT (identity_id, callback_url) DO UPDATE
       SET secret = EXCLUDED.secret, paused_at = NULL, consecutive_failures = 0
     RETURNING ${COLS}`,
    [identityId, callbackUrl, secret],
  );
  if (!row) throw new Error('upsert push_subscriptions returned nothing');
  return row;
}

export async function findSubscription(sql: Sql, id: string): Promise<SubscriptionRow | null> {
  const rows = await sql.unsafe<SubscriptionRow[]>(`SELECT ${COLS} FROM push_subscriptions WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function listOwnSubscriptions(sql: Sql, identityId: number): Promise<SubscriptionRow[]> {
  return sql.unsafe<SubscriptionRow[]>(`SELECT ${COLS} FROM push_subscriptions WHERE identity_id = $1 ORDER BY created_at`, [identityId]);
}

export async function deleteSubscription(sql: Sql, id: string, identityId: number): Promise<boolean> {
  const rows = await sql`DELETE FROM push_subscriptions WHERE id = ${id} AND identity_id = ${identityId} RETURNING id`;
  return rows.length > 0;
}

export async function activeSubscriptions(sql: Sql): Promise<SubscriptionRow[]> {
  return sql.unsafe<SubscriptionRow[]>(`SELECT ${COLS} FROM push_subscriptions WHERE paused_at IS NULL ORDER BY created_at`);
}

export async function recordSuccess(sql: Sql, id: string, at: Date, status: string): Promise<void> {
  await sql`UPDATE push_subscriptions SET consecutive_failures = 0, last_delivery_at = ${at}, last_status = ${status} WHERE id = ${id}`;
}

/** Counts a failed delivery; pauses the subscription when the run reaches `pauseAfter`. */
export async function recordFailure(sql: Sql, id: string, at: Date, status: string, pauseAfter: number): Promise<{ paused: boolean }> {
  const rows = await sql<{ paused: boolean }[]>`
    UPDATE push_subscriptions
       SET consecutive_failures = consecutive_failures + 1, last_status = ${status},
           paused_at = CASE WHEN consecutive_failures + 1 >= ${pauseAfter} THEN COALESCE(paused_at, ${at}) ELSE paused_at END
     WHERE id = ${id} RETURNING paused_at IS NOT NULL AS paused`;
  return { paused: rows[0]?.paused ?? false };
}
