// The console's pages (GET). Lists come from the operator API's own operations, run through the
// one runner with the operator token as part of this request; the rest from the console's reads
// (src/domain/operator-console.ts).

import { z } from 'zod';
import { CommonsError, type ErrorCode, fail } from '../../../domain/errors.js';
import { consoleCounts, identityPage, reportedContent } from '../../../domain/operator-console.js';
import type { Ctx } from '../../../domain/ports.js';
import { treasuryDocument } from '../../../domain/treasury.js';
import { operatorCredential } from '../../admission/credential.js';
import { operatorRoutes } from '../../routes/operator.js';
import { operatorQueueRoutes } from '../../routes/operator-queue.js';
import { STATUS_OF } from '../../runner/envelope.js';
import { type AnyRoute, ok, type Req, route } from '../../runner/route.js';
import { clearedCookie, cookieSession, gate } from './guard.js';
import { consoleHtml } from './html.js';
import { type AuditData, auditPage } from './views-audit.js';
import { offPage, signInPage } from './views-auth.js';
import { type BugData, bugsPage } from './views-bugs.js';
import { contentPage } from './views-content.js';
import { type DisbursementData, fundingPage, type GoalData } from './views-funding.js';
import { identityLookupPage, identityPage as identityView } from './views-identity.js';
import { type QueueItem, queuePage, type ReportData } from './views-queue.js';

const API = [...operatorRoutes, ...operatorQueueRoutes];

/** The data of a GET operator API operation, run with the operator token inside this request. */
async function read<T>(req: Req, ctx: Ctx, path: string, query: Record<string, unknown>): Promise<T> {
  const r = API.find((x) => x.method === 'GET' && x.path === path) as AnyRoute;
  const out = await req.nested.run(r, { query, headers: {}, credential: operatorCredential(ctx.config.operatorToken as string) });
  return (out as { data: T }).data;
}

const withContent = (ctx: Ctx, reports: ReportData[]): Promise<QueueItem[]> =>
  Promise.all(reports.map(async (report) => ({ report, content: await reportedContent(ctx, report.target_type, report.target_id) })));

const base = {
  method: 'GET' as const,
  hidden: true,
  auth: 'none' as const,
  issuesGuest: false as const,
  raw: true,
  tags: ['operator-console'],
  produces: 'text/html',
  response: z.string(),
  statuses: {
    401: { description: 'no live console session: the sign-in page (text/html)', body: true },
    404: { description: 'the console is off (OPERATOR_TOKEN unset): a page saying so and how to turn it on (text/html)', body: true },
  },
  errors: ['UNAUTHORIZED', 'NOT_FOUND'] as ErrorCode[],
};

const text = z.string().max(200).optional();

/** A signed-in page: the gates, then the page; a refusal of the operator API as a page too. */
async function page(ctx: Ctx, req: Req, render: (csrf: string) => Promise<string>) {
  const g = await gate(ctx, req);
  if ('answer' in g) return g.answer;
  try {
    return consoleHtml(await render(g.session.csrf));
  } catch (err) {
    if (!(err instanceof CommonsError)) throw err;
    return consoleHtml(signInPage({ title: 'Not found', message: err.message, alert: true, signIn: false }), STATUS_OF[err.code]);
  }
}

export const consolePageRoutes: AnyRoute[] = [
  route({
    ...base,
    path: '/operator',
    summary: 'Operator console: the report queue with live counts (the sign-in form when not signed in)',
    handler: async (req, ctx) => {
      if (!ctx.config.operatorToken) return consoleHtml(offPage(), 404);
      const g = await gate(ctx, req);
      if ('answer' in g) {
        const cleared: Record<string, string> = cookieSession(req.headers) ? { 'set-cookie': clearedCookie(ctx) } : {};
        return consoleHtml(signInPage({ title: 'Operator console: sign in' }), 200, cleared);
      }
      const [open, resolved, counts] = await Promise.all([
        read<{ reports: ReportData[] }>(req, ctx, '/api/v1/operator/reports', { state: 'open', limit: 100 }),
        read<{ reports: ReportData[] }>(req, ctx, '/api/v1/operator/reports', { state: 'resolved', limit: 10 }),
        consoleCounts(ctx),
      ]);
      const [openItems, resolvedItems] = await Promise.all([withContent(ctx, open.reports), withContent(ctx, resolved.reports)]);
      return consoleHtml(queuePage(counts, openItems, resolvedItems, g.session.csrf));
    },
  }),
  route({
    ...base,
    path: '/operator/identities',
    summary: "Operator console: an identity's page (standing, verification, token, recent chat, posts and tasks)",
    query: z.object({ registration_number: text }),
    handler: (req, ctx) =>
      page(ctx, req, async (csrf) =>
        req.query.registration_number
          ? identityView(await identityPage(ctx, req.query.registration_number.trim()), csrf)
          : identityLookupPage(csrf),
      ),
  }),
  route({
    ...base,
    path: '/operator/content',
    summary: 'Operator console: one piece of content as text, with hide and its audit entries',
    query: z.object({ type: z.string().max(40), id: z.string().max(120) }),
    handler: (req, ctx) =>
      page(ctx, req, async (csrf) => {
        const [c, audit] = await Promise.all([
          reportedContent(ctx, req.query.type, req.query.id),
          read<{ entries: AuditData[] }>(req, ctx, '/api/v1/operator/audit', { target_type: req.query.type, target_id: req.query.id }),
        ]);
        return contentPage(req.query.type, req.query.id, c, audit.entries, csrf);
      }),
  }),
  route({
    ...base,
    path: '/operator/funding',
    summary: 'Operator console: funding goals (set status) and disbursements (record, attach a transaction hash)',
    handler: (req, ctx) =>
      page(ctx, req, async (csrf) => {
        const [treasury, d] = await Promise.all([
          treasuryDocument(ctx),
          read<{ disbursements: DisbursementData[] }>(req, ctx, '/api/v1/operator/disbursements', { limit: 100 }),
        ]);
        return fundingPage(treasury.funding_goals as GoalData[], d.disbursements, csrf);
      }),
  }),
  route({
    ...base,
    path: '/operator/bug-reports',
    summary: 'Operator console: bug reports with the points they earned, and revoking them',
    handler: (req, ctx) =>
      page(ctx, req, async (csrf) => {
        const b = await read<{ bug_reports: BugData[] }>(req, ctx, '/api/v1/operator/bug-reports', { limit: 100 });
        return bugsPage(b.bug_reports, csrf);
      }),
  }),
  route({
    ...base,
    path: '/operator/audit',
    summary: 'Operator console: the audit log, newest first, filterable by action and target',
    query: z.object({ action: text, target_type: text, target_id: text, before: text }),
    handler: (req, ctx) =>
      page(ctx, req, async (csrf) => {
        const f = { action: req.query.action, target_type: req.query.target_type, target_id: req.query.target_id };
        const q = Object.fromEntries(
          Object.entries({ ...f, before: req.query.before, limit: 50 }).filter(([, v]) => v !== undefined && v !== ''),
        );
        const a = await read<{ entries: AuditData[]; next_cursor: string | null }>(req, ctx, '/api/v1/operator/audit', q);
        return auditPage(a.entries, a.next_cursor, f, csrf);
      }),
  }),
  route({
    method: 'GET',
    path: '/operator/live',
    hidden: true,
    auth: 'none',
    issuesGuest: false,
    tags: ['operator-console'],
    summary:
      "Operator console: the live counts its script polls (open reports, members who joined in the last day); only for a signed-in console session's cookie",
    response: z.object({ open_reports: z.number().int(), new_members: z.number().int(), latest_report: z.string() }),
    errors: ['UNAUTHORIZED', 'NOT_FOUND'],
    handler: async (req, ctx) => {
      if (!ctx.config.operatorToken) return fail('NOT_FOUND', 'the operator console is off on this instance');
      // The poll does not count as the operator's activity (the idle lifetime still runs).
      const g = await gate(ctx, req, false);
      if ('answer' in g) return fail('UNAUTHORIZED', 'no live operator console session: sign in at /operator');
      return ok(await consoleCounts(ctx));
    },
  }),
];
