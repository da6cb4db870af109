// The tool protocols (MCP tools, A2A skills) act through the REST routes themselves: the same
// rate limit, credential resolution, schemas and handler, so a tool answers exactly the data the
// REST operation answers and refuses exactly what it refuses (DECISIONS.md "Tool protocols").
import { randomUUID } from 'node:crypto';
import type { CommonsError } from '../../domain/errors.js';
import type { GuestIssuer } from '../../domain/guests.js';
import type { Ctx } from '../../domain/ports.js';
import { clientAddress } from '../admission/client-ip.js';
import { IDEMPOTENCY_HEADER } from '../admission/idempotent.js';
import type { RateLimits } from '../admission/limits/rate-limits.js';
import { deadlineError, withinDeadline } from './deadline.js';
import { toCommonsError } from './envelope.js';
import { type OperationOut, runOperation } from './operation.js';
import type { AnyRoute, Method } from './route.js';
import type { Router } from './router.js';

export interface ActionDeps {
  ctx: Ctx;
  guests: GuestIssuer;
  router: Router;
  /** Absent when RATE_LIMITS=off. */
  limits?: RateLimits | undefined;
}

/** The REST operation an action performs, e.g. `POST /api/v1/chat`, with its inputs. */
export interface RestCall {
  op: string;
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
  /** The tool call's `idempotency_key` (DECISIONS.md "Idempotent writes"): the same rules as the
   * Idempotency-Key header of the REST operation. */
  idempotencyKey?: string | undefined;
  /** The door's own check of its arguments (an MCP tool's input schema, an A2A data part's
   * fields), run after admission (credential, budget) and before the operation's validation, so
   * every door refuses in one order (DECISIONS.md "Every door, the same rules"). */
  check?: () => void;
}

/** Who called: the credentials presented with the protocol request. */
export interface CallerInfo {
  headers: Record<string, string>;
  ip: string;
}

export type Outcome =
  | { ok: true; data: unknown; issued?: { number: string; token: string } }
  | { ok: false; error: CommonsError; issued?: { number: string; token: string } };

export function routeOf(router: Router, op: string): AnyRoute {
  const [method, path] = op.split(' ') as [Method, string];
  const r = router.routes.find((x) => x.method === method && x.path === path);
  if (!r) throw new Error(`no route ${op}`);
  return r;
}

/** Performs one REST operation as the caller; domain and validation errors come back as values.
 * Like a REST request, it answers within the per-request deadline (DECISIONS.md "Reliability
 * promises"): past it, while the database is down or stuck, the outcome is UNAVAILABLE. */
export function perform(deps: ActionDeps, call: RestCall, who: CallerInfo): Promise<Outcome> {
  return withinDeadline(deps.ctx, performNow(deps, call, who), () => ({ ok: false, error: deadlineError() }));
}

async function performNow(deps: ActionDeps, call: RestCall, who: CallerInfo): Promise<Outcome> {
  const { ctx } = deps;
  const route = routeOf(deps.router, call.op);
  const ip = clientAddress(ctx.config.trustProxy, who.ip, who.headers['x-forwarded-for']);
  const out: OperationOut = { headers: {} };
  try {
    const result = await runOperation(
      deps,
      {
        route,
        ...(call.params ? { params: call.params } : {}),
        ...(call.query ? { query: call.query } : {}),
        body: { value: call.body },
        headers: keyedHeaders(who.headers, call.idempotencyKey),
        ip,
        requestId: randomUUID(),
        ...(call.check ? { check: call.check } : {}),
      },
      out,
    );
    if (!('data' in result)) throw new Error(`${call.op} answers a raw document; actions need JSON data`);
    return { ok: true, data: result.data, ...(out.issued ? { issued: out.issued } : {}) };
  } catch (err) {
    const error = toCommonsError(err);
    if (error.code === 'INTERNAL') ctx.log.error({ err: (err as Error)?.message, op: call.op }, 'tool action failed');
    return { ok: false, error, ...(out.issued ? { issued: out.issued } : {}) };
  }
}

/** The protocol request's headers with the action's own key: a key sent as a header of the MCP or
 * A2A request itself would stand for every action in it, so only the argument counts. */
function keyedHeaders(headers: Record<string, string>, key: string | undefined): Record<string, string> {
  const { [IDEMPOTENCY_HEADER]: _ignored, ...rest } = headers;
  return key === undefined ? rest : { ...rest, [IDEMPOTENCY_HEADER]: key };
}

/** The error as tools and skills show it: the code, the message and the next call (DECISIONS.md). */
export function errorView(e: CommonsError) {
  return {
    code: e.code,
    message: e.message,
    next: e.next,
    ...(e.fields ? { fields: e.fields } : {}),
    ...(e.retryAfterS !== undefined ? { retry_after_s: e.retryAfterS } : {}),
  };
}
