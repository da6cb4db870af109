// One operation runner (DESIGN.md "One credential, one runner"): REST routes, MCP tools, A2A skills
// and stream ops all run an operation the same way, in the same order: the request's one
// credential (credential.ts), rate limit (limits/), credentials resolved (401 for a dead one,
// counted against the address: admit.ts), precheck, validation of params, query and body
// (validate.ts), handler. Each transport races it against the one deadline (deadline.ts); the
// stream's upgrade and `auth` take the same credential step (admit.ts) within the same deadline.
// The transports differ only in how a request arrives and how the result or error is written.
import type { Caller } from '../../domain/caller.js';
import { fail } from '../../domain/errors.js';
import { admit } from '../admission/admit.js';
import { type Credential, credentialOf, NO_CREDENTIAL } from '../admission/credential.js';
import { idempotencyKeyOf, runIdempotent, sentAnonymously } from '../admission/idempotent.js';
import { classify } from '../admission/limits/policies.js';
import { resolveCaller } from '../admission/resolve-caller.js';
import { refuseUnknown, validate } from '../admission/validate.js';
import type { OperationCall, OperationDeps, OperationOut } from './call.js';
import type { Method, Req, Result } from './route.js';

export type { OperationCall, OperationDeps, OperationOut };

export async function runOperation(deps: OperationDeps, call: OperationCall, out: OperationOut): Promise<Result> {
  const { ctx, limits } = deps;
  const r = call.route;
  const session = call.session;
  const cred = session ? undefined : (call.credential ?? credentialOf(call.headers));
  const cls = classify(r.method, r);
  if (limits && session && cls !== 'none') await limits.enforceFor(cls, session.subject);
  // A token to look up takes its point of the address's bad-token budget first (admit.ts): an
  // address with none left is refused before anything else is counted or read.
  const held = limits && cred ? await limits.reserveLookup(cred, call.ip) : 'none';
  let json: unknown;
  let key: string | undefined;
  try {
    if (limits && cred) await limits.enforce(cred, call.ip, cls, out.headers);
    // The body is parsed after the limit (a refused request costs nothing) and before the caller.
    json = r.body ? call.body?.() : undefined;
    // A malformed Idempotency-Key is refused before anything is written (a guest's first row included).
    key = idempotencyKeyOf(r, call.headers, sentAnonymously(call, cred));
  } catch (err) {
    // Refused before the lookup: the point goes back.
    if (limits && cred) await limits.release(call.ip, held);
    throw err;
  }
  let caller: Caller;
  if (session) {
    caller = session.caller;
    if (r.auth === 'member' && caller.kind !== 'member') {
      fail('REGISTRATION_REQUIRED', 'this operation is open to registered identities only; register, then send auth {token}');
    }
  } else {
    const credential = cred as Credential;
    const read = (call.method ?? r.method) === 'GET' || call.method === 'HEAD';
    const opts = {
      read,
      address: call.ip,
      tokenInWrite: r.tokenInWrite === true,
      ...(r.issuesGuest === false ? { issueGuest: false } : {}),
    };
    const presented = { cred: credential, ip: call.ip, held };
    const resolved = await admit(limits, presented, () => resolveCaller(ctx, deps.guests, credential, r.auth, opts));
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
    credential: cred ?? NO_CREDENTIAL,
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
            ...(input.credential ? { credential: input.credential } : {}),
            ip: call.ip,
            requestId: call.requestId,
          },
          { headers: {} },
        ),
      ...(limits ? { failedCredentials: { reserve: (ip) => limits.reserveAt(ip), release: (ip, held) => limits.release(ip, held) } } : {}),
    },
  };
  if (key === undefined) return r.handler(req, ctx);
  return runIdempotent(ctx, { route: r, call, json, key, caller, req }, out);
}
