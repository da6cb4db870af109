// SQL for the operator's side of reports (DECISIONS.md "Operator"): the safety-report queue and its resolution,
// and the bug reports whose points the operator may revoke (sql/005, sql/011).
import type { Tx } from './ledger.js';

export interface QueuedReportRow {
  id: string;
  seq: string;
  target_type: string;
  target_id: string;
  category: string;
  reason: string;
  reporter_id: number;
  reporter_name: string;
  created_at: Date;
  resolution: 'hidden' | 'dismissed' | null;
  resolved_at: Date | null;
  resolution_note: string | null;
  /** Sort key of the queue: open reports oldest first, then resolved ones newest first. */
  grp: number;
  ord: string;
}

const REPORT = `
  SELECT r.id::text AS id, r.seq::text AS seq, r.target_type, r.target_id, r.category, r.reason,
         r.reporter_id::int AS reporter_id, i.name AS reporter_name, r.created_at, r.resolution, r.resolved_at,
         r.resolution_note,
         CASE WHEN r.resolution IS NULL THEN 0 ELSE 1 END AS grp,
         (CASE WHEN r.resolution IS NULL THEN r.seq ELSE -r.seq END)::text AS ord
  FROM safety_reports r JOIN identities i ON i.id = r.reporter_id`;

/** The queue after the cursor (grp, ord); `state` narrows it to open or resolved reports. */
export async function listQueue(
  sql: Tx,
  o: { state: 'open' | 'resolved' | null; after: { grp: number; ord: string } | null; limit: number },
): Promise<QueuedReportRow[]> {
  return sql.unsafe<QueuedReportRow[]>(
    `SELECT * FROM (${REPORT}) q
     WHERE ($1::text IS NULL OR ($1 = 'open') = (q.resolution IS NULL))
       AND ($2::int IS NULL OR (q.grp, q.ord::bigint) > ($2::int, $3::bigint))
     ORDER BY q.grp, q.ord::bigint LIMIT $4`,
    [o.state, o.after?.grp ?? null, o.after?.ord ?? null, o.limit],
  );
}

export async function lockReport(tx: Tx, id: string): Promise<QueuedReportRow | null> {
  const rows = await tx.unsafe<QueuedReportRow[]>(`${REPORT} WHERE r.id = $1 FOR UPDATE OF r`, [id]);
  return rows[0] ?? null;
}

/** Resolves open reports (the given one, or every open one on a target); returns their ids. */
export async function resolveReports(
  tx: Tx,
  where: { id: string } | { targetType: string; targetId: string },
  resolution: 'hidden' | 'dismissed',
  note: string | null,
  at: Date,
): Promise<string[]> {
  const rows =
    'id' in where
      ? await tx<{ id: string }[]>`
          UPDATE safety_reports SET resolution = ${resolution}, resolved_at = ${at}, resolution_note = ${note}
          WHERE id = ${where.id} AND resolution IS NULL RETURNING id::text AS id`
      : await tx<{ id: string }[]>`
          UPDATE safety_reports SET resolution = ${resolution}, resolved_at = ${at}, resolution_note = ${note}
          WHERE target_type = ${where.targetType} AND target_id = ${where.targetId} AND resolution IS NULL
          RETURNING id::text AS id`;
  return rows.map((r) => r.id);
}

export interface BugRow {
  id: string;
  seq: string;
  title: string;
  body: string;
  area: string;
  fix_code: string | null;
  author_id: number;
  author_name: string;
  created_at: Date;
  points_awarded: number;
  points_revoked: number;
}

const BUG = `
  SELECT b.id::text AS id, b.seq::text AS seq, b.title, b.body, b.area, b.fix_code, b.author_id::int AS author_id,
         i.name AS author_name, b.created_at,
         coalesce((SELECT sum(points) FROM point_events e WHERE e.kind = 'bug_report' AND e.ref = b.id::text), 0)::int
           AS points_awarded,
         coalesce((SELECT -sum(points) FROM point_events e WHERE e.kind = 'bug_report_revoked' AND e.ref = b.id::text), 0)::int
           AS points_revoked
  FROM bug_reports b JOIN identities i ON i.id = b.author_id`;

/** Newest first; `beforeSeq` is the keyset cursor. */
export async function listBugs(sql: Tx, beforeSeq: string | null, limit: number): Promise<BugRow[]> {
  return sql.unsafe<BugRow[]>(`${BUG} WHERE ($1::bigint IS NULL OR b.seq < $1) ORDER BY b.seq DESC LIMIT $2`, [beforeSeq, limit]);
}

/** The bug report, locked so two revocations of it queue up (the unique index is the last word). */
export async function lockBug(tx: Tx, id: string): Promise<BugRow | null> {
  const rows = await tx.unsafe<BugRow[]>(`${BUG} WHERE b.id = $1 FOR UPDATE OF b`, [id]);
  return rows[0] ?? null;
}
