// SQL for bug reports and safety reports (spec 2.8 "Safety report input", 4; DECISIONS.md
// "Channels, post types, report types").
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

export interface BugRow {
  id: string;
  title: string;
  area: string;
  has_fix_code: boolean;
  created_at: Date;
}

export async function insertBug(
  tx: Tx,
  b: { title: string; body: string; area: string; fixCode: string | null; authorId: number; at: Date },
): Promise<BugRow> {
  const [row] = await tx<BugRow[]>`
    INSERT INTO bug_reports (title, body, area, fix_code, author_id, created_at)
    VALUES (${b.title}, ${b.body}, ${b.area}, ${b.fixCode}, ${b.authorId}, ${b.at})
    RETURNING id, title, area, fix_code IS NOT NULL AS has_fix_code, created_at`;
  return row as BugRow;
}

export async function countBugs(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM bug_reports WHERE hidden_at IS NULL`;
  return row?.n ?? 0;
}

export interface SafetyReportRow {
  id: string;
  target_type: string;
  target_id: string;
  category: string;
  reason: string;
  created_at: Date;
  resolution: string | null;
}

export interface NewSafetyReport {
  targetType: string;
  targetId: string;
  category: string;
  reason: string;
  reporterId: number;
  at: Date;
}

/** Inserts a report, or returns the one this reporter already filed on the same target. */
export async function insertSafetyReport(tx: Tx, r: NewSafetyReport): Promise<{ row: SafetyReportRow; created: boolean }> {
  const inserted = await tx<SafetyReportRow[]>`
    INSERT INTO safety_reports (target_type, target_id, category, reason, reporter_id, created_at)
    VALUES (${r.targetType}, ${r.targetId}, ${r.category}, ${r.reason}, ${r.reporterId}, ${r.at})
    ON CONFLICT (reporter_id, target_type, target_id) DO NOTHING
    RETURNING id, target_type, target_id, category, reason, created_at, resolution`;
  if (inserted[0]) return { row: inserted[0], created: true };
  const [existing] = await tx<SafetyReportRow[]>`
    SELECT id, target_type, target_id, category, reason, created_at, resolution FROM safety_reports
    WHERE reporter_id = ${r.reporterId} AND target_type = ${r.targetType} AND target_id = ${r.targetId}`;
  return { row: existing as SafetyReportRow, created: false };
}

/**
 * Where each reportable target lives (the same tables as HIDE_TARGETS in src/domain/moderation.ts,
 * plus identities for `ai`). A table absent from this database (to_regclass) makes the report a
 * report of nothing: 404. `id::text` keeps the lookup independent of the id column's type.
 */
const TARGET_TABLES: Record<string, { table: string; column: string }> = {
  chat_message: { table: 'chat_messages', column: 'id' },
  post: { table: 'posts', column: 'id' },
  comment: { table: 'comments', column: 'id' },
  question: { table: 'questions', column: 'id' },
  answer: { table: 'answers', column: 'id' },
  proposal: { table: 'proposals', column: 'id' },
  reply: { table: 'replies', column: 'id' },
  task: { table: 'tasks', column: 'id' },
  submission: { table: 'task_submissions', column: 'id' },
  campaign: { table: 'funding_campaigns', column: 'id' },
  ai: { table: 'identities', column: 'id' },
  dm: { table: 'dm_messages', column: 'id' },
};

export async function targetExists(sql: Sql, targetType: string, key: string): Promise<boolean> {
  const t = TARGET_TABLES[targetType];
  if (!t) return false;
  const [reg] = await sql<{ r: string | null }[]>`SELECT to_regclass(${t.table})::text AS r`;
  if (!reg?.r) return false;
  const rows = await sql.unsafe(`SELECT 1 FROM ${t.table} WHERE ${t.column}::text = $1 LIMIT 1`, [key]);
  return rows.length > 0;
}
