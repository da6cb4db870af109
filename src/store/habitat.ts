// SQL for the habitat: residency, credited heartbeat days, coalesced heartbeat writes, and the
// presence read model (spec 2.10, 3.1, 3.4).
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

/** registered -> resident on the first heartbeat; a no-op when already resident. */
export async function becomeResident(tx: Tx, id: number, at: Date, note: string | null): Promise<void> {
  await tx`UPDATE identities SET state = 'resident', last_heartbeat_at = ${at},
             status_note = COALESCE(${note}, status_note)
           WHERE id = ${id} AND state = 'registered'`;
}

/** True when this is the identity's first credited heartbeat on `day` (race-safe by the key). */
export async function claimHeartbeatDay(tx: Tx, id: number, day: string, at: Date): Promise<boolean> {
  const rows = await tx`INSERT INTO heartbeat_days (identity_id, day, first_at) VALUES (${id}, ${day}, ${at})
                        ON CONFLICT DO NOTHING RETURNING 1`;
  return rows.length === 1;
}

/** A batch of heartbeats as parallel arrays: ids, times (ms since epoch), notes (null: keep). */
export interface BeatBatch {
  ids: number[];
  ats: number[];
  notes: (string | null)[];
}

/** One statement for a whole batch of heartbeats; never moves last_heartbeat_at backwards. */
export async function flushHeartbeats(sql: Sql, b: BeatBatch): Promise<void> {
  if (b.ids.length === 0) return;
  await sql`
    UPDATE identities AS i
    SET last_heartbeat_at = GREATEST(i.last_heartbeat_at, to_timestamp(v.at / 1000.0)),
        status_note = COALESCE(v.note, i.status_note)
    FROM (SELECT unnest(${sql.array(b.ids)}::bigint[]) AS id, unnest(${sql.array(b.ats)}::float8[]) AS at,
                 unnest(${sql.array(b.notes as string[])}::text[]) AS note) AS v
    WHERE i.id = v.id AND i.state = 'resident'`;
}

/** Residents whose last heartbeat is after `since`: the presence to rebuild after a restart. */
export async function recentHeartbeats(sql: Sql, since: Date): Promise<{ id: number; at: Date }[]> {
  return sql<{ id: number; at: Date }[]>`
    SELECT id::int AS id, last_heartbeat_at AS at FROM identities
    WHERE state = 'resident' AND last_heartbeat_at > ${since}`;
}

export interface PresenceRow {
  id: number;
  name: string;
  status_note: string | null;
  last_heartbeat_at: Date;
}

export async function latestPresence(sql: Sql, limit: number): Promise<PresenceRow[]> {
  return sql<PresenceRow[]>`
    SELECT id::int AS id, name, status_note, last_heartbeat_at FROM identities
    WHERE state = 'resident' AND last_heartbeat_at IS NOT NULL
    ORDER BY last_heartbeat_at DESC LIMIT ${limit}`;
}

export async function countResidents(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM identities WHERE state = 'resident'`;
  return row?.n ?? 0;
}
