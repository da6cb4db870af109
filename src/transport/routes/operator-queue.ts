// The operator's queue (DECISIONS.md "Operator", "Scores and badges"): safety reports
// and their resolution, funding-goal status, and revoking the points of a bogus bug report. Open
// only to OPERATOR_TOKEN; every action is audited in its own transaction.
import { z } from 'zod';
import * as operator from '../../domain/operator.js';
import * as queue from '../../domain/report-queue.js';
import { ok, route } from '../runner/route.js';
import { paging, text, uuidParam } from '../runner/schemas.js';
import { seqPaging } from './content-schemas.js';

const base = { auth: 'operator' as const, tags: ['operator'] };
const who = z.object({ registration_number: z.string(), name: z.string() });

const Report = z.object({
  id: z.string(),
  state: z.enum(['open', 'hidden', 'dismissed']),
  target_type: z.string(),
  target_id: z.string(),
  category: z.string(),
  reason: z.string(),
  reporter: who,
  created_at: z.string(),
  resolved_at: z.string().nullable(),
  resolution_note: z.string().nullable(),
  reported_message: z
    .object({ id: z.string(), from: z.string(), to: z.string(), body: z.string(), created_at: z.string() })
    .optional()
    .describe('a report of type dm: the one reported message (never its conversation)'),
});

const BugReport = z.object({
  id: z.string(),
  title: z.string(),
  body: z.string(),
  area: z.string(),
  fix_code: z.string().nullable(),
  author: who,
  created_at: z.string(),
  points_awarded: z.number().int(),
  points_revoked: z.number().int(),
});

export const operatorQueueRoutes = [
  route({
    ...base,
    method: 'GET',
    path: '/api/v1/operator/reports',
    summary: 'Safety reports: open ones first (oldest first), then resolved ones (newest first)',
    query: paging.extend({
      before: z.string().regex(queue.REPORT_CURSOR, 'a cursor from next_cursor').optional(),
      state: z.enum(['open', 'resolved']).optional(),
    }),
    response: z.object({ reports: z.array(Report), next_cursor: z.string().nullable(), content_trust: z.string() }),
    handler: async (req, ctx) => ok(await queue.listReports(ctx, req.query)),
  }),
  route({
    ...base,
    method: 'POST',
    path: '/api/v1/operator/reports/{id}/resolve',
    summary: 'Resolve a safety report: hide the content everywhere it is listed (with every open report on it), or dismiss',
    params: uuidParam,
    body: z.object({ action: z.enum(['hide', 'dismiss']), note: text(2000).optional() }),
    response: Report.extend({
      hidden: z.object({ hidden_at: z.string(), changed: z.boolean() }).nullable(),
      also_resolved: z.array(z.string()),
      content_trust: z.string(),
    }),
    errors: ['NOT_FOUND', 'INVALID_STATE'],
    handler: async (req, ctx) => ok(await queue.resolveReport(ctx, req.params.id, req.body, req.requestId)),
  }),
  route({
    ...base,
    method: 'POST',
    path: '/api/v1/operator/funding-goals/{id}/status',
    summary: 'Set a funding goal to open, funded or closed (the treasury document reflects it; closed goals take nothing)',
    params: z.object({ id: z.string().regex(/^[a-z0-9_]{1,64}$/, 'a funding goal id') }),
    body: z.object({ status: z.enum(operator.GOAL_STATUSES) }),
    response: z.object({ id: z.string(), status: z.string(), previous_status: z.string(), changed: z.boolean() }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await operator.setGoalStatus(ctx, req.params.id, req.body.status, req.requestId)),
  }),
  route({
    ...base,
    method: 'GET',
    path: '/api/v1/operator/bug-reports',
    summary: 'Bug reports with the points each earned and any revoked, newest first (not public)',
    query: seqPaging,
    response: z.object({ bug_reports: z.array(BugReport), next_cursor: z.string().nullable(), content_trust: z.string() }),
    handler: async (req, ctx) => ok(await queue.listBugReports(ctx, req.query)),
  }),
  route({
    ...base,
    method: 'POST',
    path: '/api/v1/operator/bug-reports/{id}/revoke-points',
    summary: 'Revoke the points of a bogus bug report (a negative point event; once)',
    params: uuidParam,
    body: z.object({ reason: text(2000).optional() }),
    response: BugReport.extend({ revoked_at: z.string(), content_trust: z.string() }),
    errors: ['NOT_FOUND', 'INVALID_STATE'],
    handler: async (req, ctx) => ok(await queue.revokeBugPoints(ctx, req.params.id, req.body.reason, req.requestId)),
  }),
];
