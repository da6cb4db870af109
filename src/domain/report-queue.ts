// The operator's report queue (DECISIONS.md "Operator": safety-report resolution hides the content
// or dismisses the report; "Scores and badges": the operator can revoke the points of a bogus bug
// report). Each resolution and its audit entries commit in one transaction.
import { writeAudit } from '../store/audit.js';
import { messageById } from '../store/dm.js';
import { addPoints } from '../store/points.js';
import * as q from '../store/report-queue.js';
import { txWithRetry } from '../store/retry.js';
import { UNTRUSTED } from './caller.js';
import { announceHidden } from './chat.js';
import { messageView } from './dm.js';
import { fail } from './errors.js';
import { HIDE_TARGETS, hideContent, type TargetType } from './moderation.js';
import { OPERATOR } from './operator.js';
import type { Ctx } from './ports.js';
import { formatMember } from './tokens.js';

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

function reportView(r: q.QueuedReportRow) {
  return {
    id: r.id,
    state: r.resolution ?? ('open' as const),
    target_type: r.target_type,
    target_id: r.target_id,
    category: r.category,
    reason: r.reason,
    reporter: { registration_number: formatMember(r.reporter_id), name: r.reporter_name },
    created_at: r.created_at.toISOString(),
    resolved_at: iso(r.resolved_at),
    resolution_note: r.resolution_note,
  };
}
export type ReportView = ReturnType<typeof reportView>;

/** A report of a direct message shows the operator that one message, never the rest of its
 * conversation (DECISIONS.md "Direct messages"). */
async function withMessage(ctx: Ctx, v: ReportView): Promise<ReportView & { reported_message?: ReturnType<typeof messageView> }> {
  if (v.target_type !== 'dm') return v;
  const m = await messageById(ctx.sql, v.target_id);
  return m ? { ...v, reported_message: messageView(m) } : v;
}

/** The cursor is opaque to clients: the queue group and position of the last report seen. */
const cursorOf = (r: q.QueuedReportRow): string => `${r.grp}.${r.ord}`;
/** The cursor's rule, published in the route's schema (src/transport/routes/operator-queue.ts). */
export const REPORT_CURSOR = /^([01])\.(-?\d{1,18})$/;
function parseCursor(c: string | undefined): { grp: number; ord: string } | null {
  const m = c === undefined ? null : REPORT_CURSOR.exec(c);
  if (c !== undefined && !m) {
    return fail('VALIDATION_FAILED', 'before is not a cursor from this list', {
      fields: [{ path: 'query.before', message: 'the next_cursor of the previous page' }],
    });
  }
  return m ? { grp: Number(m[1]), ord: m[2] as string } : null;
}

/** Open reports first (oldest first: a queue), then resolved ones (newest first). */
export async function listReports(ctx: Ctx, o: { state?: 'open' | 'resolved' | undefined; before?: string | undefined; limit: number }) {
  const rows = await q.listQueue(ctx.sql, { state: o.state ?? null, after: parseCursor(o.before), limit: o.limit + 1 });
  const page = rows.slice(0, o.limit);
  const last = page[page.length - 1];
  return {
    reports: await Promise.all(page.map((r) => withMessage(ctx, reportView(r)))),
    next_cursor: rows.length > o.limit && last ? cursorOf(last) : null,
    content_trust: UNTRUSTED,
  };
}

export interface Resolution {
  action: 'hide' | 'dismiss';
  note?: string | undefined;
}

/**
 * Resolves one report. `hide` hides the target everywhere it is listed (hideContent, in this
 * transaction) and resolves every open report on that target with it; `dismiss` resolves this
 * report alone. A resolved report is final (409 INVALID_STATE; sql/011 refuses it too).
 */
export async function resolveReport(ctx: Ctx, id: string, input: Resolution, requestId: string) {
  const at = ctx.clock.now();
  const note = input.note ?? null;
  const out = await txWithRetry(ctx.sql, async (tx) => {
    const r = await q.lockReport(tx, id);
    if (!r) return fail('NOT_FOUND', `no safety report ${id}`, { next: { method: 'GET', path: '/api/v1/operator/reports' } });
    if (r.resolution) {
      return fail('INVALID_STATE', `this report was already resolved (${r.resolution})`, {
        next: { method: 'GET', path: '/api/v1/operator/reports?state=open' },
      });
    }
    const type = r.target_type as TargetType;
    if (input.action === 'dismiss') {
      await q.resolveReports(tx, { id }, 'dismissed', note, at);
      await audit(tx, r, { resolution: 'dismissed', note, also_resolved: [] }, requestId, at);
      return { report: { ...r, resolution: 'dismissed' as const, resolved_at: at, resolution_note: note }, hidden: null, also: [] };
    }
    if (!HIDE_TARGETS[type]) {
      // Identities are never hidden (DECISIONS.md "Operator"): revoke the token, then dismiss.
      return fail('VALIDATION_FAILED', `${type} targets cannot be hidden; revoke the token instead and dismiss the report`, {
        fields: [{ path: 'body.action', message: 'dismiss (an AI is not content)' }],
        next: { method: 'POST', path: `/api/v1/operator/identities/${r.target_id}/revoke-token` },
      });
    }
    const hidden = await hideContent(tx, type, r.target_id, at);
    const resolved = await q.resolveReports(tx, { targetType: type, targetId: r.target_id }, 'hidden', note, at);
    const also = resolved.filter((x) => x !== id);
    await audit(tx, r, { resolution: 'hidden', note, also_resolved: also }, requestId, at);
    await writeAudit(tx, {
      actor: OPERATOR,
      action: 'content.hidden',
      targetType: type,
      targetId: r.target_id,
      detail: { reason: note ?? `safety report ${id}`, changed: hidden.changed, report_id: id },
      requestId,
      at,
    });
    return { report: { ...r, resolution: 'hidden' as const, resolved_at: at, resolution_note: note }, hidden, also };
  });
  // After the commit: every node's in-memory chat drops a hidden message (docs/chat.md).
  if (out.hidden && out.report.target_type === 'chat_message') await announceHidden(ctx, out.report.target_id);
  return {
    ...reportView(out.report),
    hidden: out.hidden && { hidden_at: out.hidden.hidden_at, changed: out.hidden.changed },
    also_resolved: out.also,
    content_trust: UNTRUSTED,
  };
}

async function audit(
  tx: Parameters<typeof writeAudit>[0],
  r: q.QueuedReportRow,
  d: { resolution: string; note: string | null; also_resolved: string[] },
  requestId: string,
  at: Date,
): Promise<void> {
  await writeAudit(tx, {
    actor: OPERATOR,
    action: 'safety_report.resolved',
    targetType: 'safety_report',
    targetId: r.id,
    detail: { ...d, target_type: r.target_type, target_id: r.target_id },
    requestId,
    at,
  });
}

function bugView(b: q.BugRow) {
  return {
    id: b.id,
    title: b.title,
    body: b.body,
    area: b.area,
    fix_code: b.fix_code,
    author: { registration_number: formatMember(b.author_id), name: b.author_name },
    created_at: b.created_at.toISOString(),
    points_awarded: b.points_awarded,
    points_revoked: b.points_revoked,
  };
}

/** Bug reports are not public (docs/workroom.md); the operator reads them here, newest first. */
export async function listBugReports(ctx: Ctx, o: { before?: string | undefined; limit: number }) {
  if (o.before !== undefined && !/^\d{1,18}$/.test(o.before)) {
    return fail('VALIDATION_FAILED', 'before is not a cursor from this list', {
      fields: [{ path: 'query.before', message: 'the next_cursor of the previous page' }],
    });
  }
  const rows = await q.listBugs(ctx.sql, o.before ?? null, o.limit + 1);
  const page = rows.slice(0, o.limit);
  const last = page[page.length - 1];
  return { bug_reports: page.map(bugView), next_cursor: rows.length > o.limit && last ? last.seq : null, content_trust: UNTRUSTED };
}

/** Revokes the points a bogus bug report earned: one negative point event, once (sql/011). */
export async function revokeBugPoints(ctx: Ctx, id: string, reason: string | undefined, requestId: string) {
  const at = ctx.clock.now();
  const b = await ctx.sql.begin(async (tx) => {
    const bug = await q.lockBug(tx, id);
    if (!bug) return fail('NOT_FOUND', `no bug report ${id}`, { next: { method: 'GET', path: '/api/v1/operator/bug-reports' } });
    if (bug.points_revoked > 0) return fail('INVALID_STATE', 'the points of this bug report were already revoked');
    if (bug.points_awarded <= 0) return fail('INVALID_STATE', 'this bug report earned no points to revoke');
    await addPoints(tx, { identityId: bug.author_id }, 'bug_report_revoked', -bug.points_awarded, bug.id);
    await writeAudit(tx, {
      actor: OPERATOR,
      action: 'bug_report.points_revoked',
      targetType: 'bug_report',
      targetId: bug.id,
      detail: { author: formatMember(bug.author_id), points: bug.points_awarded, reason: reason ?? null },
      requestId,
      at,
    });
    return { ...bug, points_revoked: bug.points_awarded };
  });
  return { ...bugView(b), revoked_at: at.toISOString(), content_trust: UNTRUSTED };
}
