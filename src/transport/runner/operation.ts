// One operation runner (DESIGN.md "One operation runner"): REST routes, MCP tools, A2A skills and stream ops
// all run an operation the same way, in the same order: rate limit, credentials (401 for a dead
// one, counted against the address), precheck, validation of params, query and body, handler.
// The transports differ only in how a request arrives and how the result or error is written.
import type { Caller } from '../../domain/caller.js';
import { fail } from '../../domain/errors.js';
import type { GuestIssuer } from '../../domain/guests.js';
import type { Ctx } from '../../domain/ports.js';
import { checkCredential } from './credential.js';
import { idempotencyKeyOf, runIdempotent } from './idempotent.js';
import { classify, type LimitSubject, type RateLimits } from './limits/rate-limits.js';
import { presentedToken, resolveCaller } from './resolve-caller.js';
import type { AnyRoute, Method, Req, Result } from './route.js';
import { refuseUnknown, validate } from './validate.js';

export interface OperationDeps {
  ctx: Ctx;
  guests: GuestIssuer;
  /** Absent when RATE_LIMITS=off. */
  limits?: RateLimits | undefined;
}

export interface OperationCall {
  route: AnyRoute;
  /** The request's own method and path (HTTP: HEAD, and the path with its parameters filled in);
   * the route's when absent (tools and stream ops). */
  method?: string;
  path?: string;
  /** Raw path parameters, query values and the parsed JSON body (a thunk: parsed after the limit). */
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: () => unknown;
  headers: Record<string, string>;
  /** The client address (TRUST_PROXY applied). */
  ip: string;
  requestId: string;
  /** A caller already known (a stream session after `auth`): its credentials are not resolved
   * again, and its limits count against `subject`. */
  session?: { caller: Caller; subject: LimitSubject };
}

/** What a transport shows besides the result, also when the operation fails. */
export interface OperationOut {
  /** RateLimit and RateLimit-Policy headers. */
  headers: Record<string, string>;
  /** A guest issued to an anonymous caller, announced in headers (or the tool's answer). */
  issued?: { number: string; token: string };
  /** The answer is a stored one, given again for a repeated Idempotency-Key (src/transport/runner/idempotent.ts). */
  replayed?: boolean;
}

export async function runOperation(deps: OperationDeps, call: OperationCall, out: OperationOut): Promise<Result> {
  const { ctx, limits } = deps;
  const r = call.route;
  const limitReq = { method: r.method, path: r.path, headers: call.headers, ip: call.ip };
  const session = call.session;
  const cls = classify(r.method, r);
  if (limits && session && cls !== 'none') await limits.enforceFor(cls, session.subject);
  else if (limits && !session) await limits.enforce(limitReq, r, out.headers);
  // The body is parsed after the limit (a refused request costs nothing) and before the caller.
  const json = r.body ? call.body?.() : undefined;
  // A malformed Idempotency-Key is refused before anything is written (a guest's first row included).
  const key = idempotencyKeyOf(r, call.headers);
  let caller: Caller;
  if (session) {
    caller = session.caller;
    if (r.auth === 'member' && caller.kind !== 'member') {
      fail('REGISTRATION_REQUIRED', 'this operation is open to registered identities only; register, then send auth {token}');
    }
  } else {
    const read = (call.method ?? r.method) === 'GET' || call.method === 'HEAD';
    const opts = {
      read,
      address: call.ip,
      tokenInWrite: r.tokenInWrite === true,
      ...(r.issuesGuest === false ? { issueGuest: false } : {}),
    };
    // The HTTP limits above already refused an unknown token of an address over budget.
    const presented = { token: presentedToken(call.headers), ip: call.ip, gate: false };
    const resolved = await checkCredential(limits, presented, () => resolveCaller(ctx, deps.guests, call.headers, r.auth, opts));
    caller = resolved.caller;
    if (resolved.issued) out.issued = resolved.issued;
    if (resolved.claimed && cls === 'chat' && caller.kind === 'guest') await limits?.chargeGuest(caller.guestNumber);
  }
  if (r.precheck) {
    refuseUnknown(r.body, json ?? {}, 'body');
    await r.precheck(json, ctx);
  }
  const req: Req = {
    method: (call.method ?? r.method) as Method,
    path: call.path ?? r.path,
    params: validate(r.params, call.params ?? {}, 'params'),
    query: validate(r.query, call.query ?? {}, 'query'),
    body: validate(r.body, json ?? {}, 'body'),
    headers: call.headers,
    caller,
    ip: call.ip,
    requestId: call.requestId,
    nested: {
      run: (route, input) =>
        runOperation(
          deps,
          {
            route,
            params: input.params ?? {},
            query: input.query ?? {},
            body: () => input.body,
            headers: input.headers,
            ip: call.ip,
            requestId: call.requestId,
          },
          { headers: {} },
        ),
      ...(limits
        ? { failedCredentials: { refuseIfSpent: (ip) => limits.refuseSpentAddress(ip), count: (ip) => limits.countFailedAt(ip) } }
        : {}),
    },
  };
  if (key === undefined) return r.handler(req, ctx);
  return runIdempotent(ctx, { route: r, call, json, key, caller, req }, out);
}
