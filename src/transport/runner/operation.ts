// One operation runner (DESIGN.md "One credential, one runner"): REST routes, MCP tools, A2A skills,
// stream ops and the console's forms all run an operation the same way: the admission path first
// (src/transport/admission/admit-call.ts: credential, budget, decoding, the key's syntax, the
// caller), then precheck, validation of params, query and body (admission/validate.ts), and the
// handler, once per Idempotency-Key (admission/idempotent.ts). Each transport races it against the
// one deadline (deadline.ts); the stream's upgrade and `auth` take the same credential step
// (admission/admit.ts) within the same deadline. The transports differ only in how a request
// arrives and how the result or error is written.
import { admitCall } from '../admission/admit-call.js';
import { NO_CREDENTIAL } from '../admission/credential.js';
import { runIdempotent } from '../admission/idempotent.js';
import { refuseUnknown, validate } from '../admission/validate.js';
import type { OperationCall, OperationDeps, OperationOut } from './call.js';
import type { Method, Req, Result } from './route.js';

export type { OperationCall, OperationDeps, OperationOut };

export async function runOperation(deps: OperationDeps, call: OperationCall, out: OperationOut): Promise<Result> {
  const { ctx, limits } = deps;
  const r = call.route;
  // Who calls, with what: the one admission path (src/transport/admission/admit-call.ts).
  const { caller, cred, json, key } = await admitCall(deps, call, out);
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
            body: { value: input.body },
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
