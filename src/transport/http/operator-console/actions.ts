// The console's actions (docs/operations.md "The operator's console"). Each is a plain HTML form
// POSTed to /operator/<the operator API's path below /api/v1/operator/>, and runs that operator
// API operation through the one runner (src/transport/runner/operation.ts), with the operator token, as
// part of this request: the same validation, the same checks, the same audit entry with this
// request's id. Before it runs: the console is on, Origin is PUBLIC_URL's, the session is live,
// the CSRF token is the session's. After it: 303 back to the page the form was on.

import { z } from 'zod';
import { CommonsError } from '../../../domain/errors.js';
import type { ConsoleSession } from '../../../domain/operator-session.js';
import type { Ctx } from '../../../domain/ports.js';
import { operatorCredential } from '../../admission/credential.js';
import { operatorRoutes } from '../../routes/operator.js';
import { operatorQueueRoutes } from '../../routes/operator-queue.js';
import { STATUS_OF } from '../../runner/envelope.js';
import { type AnyRoute, type Req, route } from '../../runner/route.js';
import { csrfRefusal, gate, originRefusal } from './guard.js';
import { consoleHtml, seeOther } from './html.js';
import { offPage } from './views-auth.js';
import { errorPage } from './views-error.js';

interface Action {
  /** The operator API operation this form runs. */
  api: string;
  /** The form fields that make its body (all strings; empty ones are left out). */
  fields: string[];
  /** The path parameter, when the operation has one. */
  param?: 'id' | 'registration_number';
  summary: string;
}

const ACTIONS: Action[] = [
  {
    api: '/api/v1/operator/reports/{id}/resolve',
    fields: ['action', 'note'],
    param: 'id',
    summary: 'resolve a safety report (hide or dismiss)',
  },
  { api: '/api/v1/operator/hide', fields: ['target_type', 'target_id', 'reason'], summary: 'hide a piece of content' },
  {
    api: '/api/v1/operator/identities/{registration_number}/verification',
    fields: ['verification_status', 'zho_level'],
    param: 'registration_number',
    summary: "set an identity's verification status and ZHO level",
  },
  {
    api: '/api/v1/operator/identities/{registration_number}/revoke-token',
    fields: ['reason'],
    param: 'registration_number',
    summary: "revoke an identity's token",
  },
  { api: '/api/v1/operator/funding-goals/{id}/status', fields: ['status'], param: 'id', summary: "set a funding goal's status" },
  {
    api: '/api/v1/operator/disbursements',
    fields: ['asset', 'amount', 'to_address', 'purpose', 'goal_id', 'tx_hash'],
    summary: 'record a disbursement',
  },
  { api: '/api/v1/operator/disbursements/{id}/tx', fields: ['tx_hash'], param: 'id', summary: "attach a disbursement's transaction hash" },
  { api: '/api/v1/operator/bug-reports/{id}/revoke-points', fields: ['reason'], param: 'id', summary: "revoke a bug report's points" },
];

const API: AnyRoute[] = [...operatorRoutes, ...operatorQueueRoutes];

const apiRoute = (path: string): AnyRoute => {
  const r = API.find((x) => x.method === 'POST' && x.path === path);
  if (!r) throw new Error(`no operator operation POST ${path}`);
  return r;
};

/** Where to go after an action: a console page named by the form, else the queue. */
export function backTo(back: string | undefined): string {
  return back && /^\/operator(?:[/?#][A-Za-z0-9\-._~!$&'()*+,;=:@/?#%]*)?$/.test(back) && !back.startsWith('/operator//')
    ? back
    : '/operator';
}

const field = z.string().max(20_000).optional();
const formOf = (names: string[]) => z.object(Object.fromEntries(['csrf', 'back', ...names].map((n) => [n, field])));

export const CONSOLE_POST_STATUSES = {
  303: { description: 'done: see the console page the form came from (Location)' },
  401: { description: 'no live console session: the sign-in page (text/html); nothing is written', body: true },
  403: {
    description: 'Origin is not PUBLIC_URL, or the form has no valid CSRF token for this session (text/html); nothing is written',
    body: true,
  },
  404: { description: 'the console is off (OPERATOR_TOKEN unset), or the target does not exist (text/html)', body: true },
};

/** The codes behind those statuses: the pipeline's own refusals answer them in the JSON envelope. */
export const CONSOLE_ERRORS = ['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND'] as const;

/** Runs a console form: the gates, then the operator operation; an HTML page for a refusal. */
export async function runForm(
  ctx: Ctx,
  req: Req<Record<string, string | undefined>>,
  op: (session: ConsoleSession) => Promise<{ headers?: Record<string, string> } | unknown>,
): Promise<ReturnType<typeof seeOther>> {
  if (!ctx.config.operatorToken) return consoleHtml(offPage(), 404);
  // Origin first: a request from elsewhere is refused before its cookie is even looked at.
  const foreign = originRefusal(ctx, req);
  if (foreign) return foreign;
  const g = await gate(ctx, req);
  if ('answer' in g) return g.answer;
  const refused = csrfRefusal(ctx, g.session, req.body);
  if (refused) return refused;
  let done: unknown;
  try {
    done = await op(g.session);
  } catch (err) {
    if (!(err instanceof CommonsError)) throw err;
    return consoleHtml(errorPage(err, backTo(req.body.back), g.session.csrf), STATUS_OF[err.code]);
  }
  const headers = (done as { headers?: Record<string, string> } | undefined)?.headers ?? {};
  return seeOther(backTo(req.body.back), headers);
}

function actionRoute(a: Action): AnyRoute {
  const api = apiRoute(a.api);
  const path = a.api.replace('/api/v1/operator/', '/operator/');
  return route({
    method: 'POST',
    path,
    auth: 'none',
    issuesGuest: false,
    form: true,
    raw: true,
    summary: `Operator console form: ${a.summary} (runs POST ${a.api})`,
    tags: ['operator-console'],
    produces: 'text/html',
    ...(a.param ? { params: z.object({ [a.param]: z.string().max(120) }) } : {}),
    body: formOf(a.fields),
    response: z.string(),
    hidden: true,
    statuses: {
      ...CONSOLE_POST_STATUSES,
      400: { description: 'the operator API refused the input: a page naming the fields (text/html); nothing is written', body: true },
      409: { description: 'the operator API refused the state (e.g. a report already resolved; text/html)', body: true },
    },
    errors: [...CONSOLE_ERRORS, 'VALIDATION_FAILED', 'INVALID_STATE'],
    handler: (req, ctx) =>
      runForm(ctx, req, async () => {
        const body: Record<string, string> = {};
        for (const f of a.fields) {
          const v = req.body[f];
          if (v !== undefined && v.trim() !== '') body[f] = v;
        }
        const params = a.param ? { [a.param]: (req.params as Record<string, string>)[a.param] as string } : {};
        await req.nested.run(api, { params, body, headers: {}, credential: operatorCredential(ctx.config.operatorToken as string) });
      }),
  });
}

export const consoleActionRoutes: AnyRoute[] = ACTIONS.map(actionRoute);
