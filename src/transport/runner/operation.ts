// One operation runner (DESIGN.md "One credential, one runner"): REST routes, MCP tools, A2A skills,
// stream ops and the console's forms all run an operation the same way: the admission path first
// (src/transport/admission/admit-call.ts: credential, budget, decoding, the key's syntax, the
// caller), then precheck, validation of params, query and body (admission/validate.ts), and the
// handler, once per Idempotency-Key (admission/idempotent.ts). Each transport races it against the
// one deadline (deadline.ts); the stream's upgrade and `auth` take the same credential step
// (admission/admit.ts) within the same deadline. The transports differ only in how a request
// arrives and how the result or error is written.

import { CommonsError } from '../../domain/errors.js';
import { admitSecret } from '../admission/admit.js';
import { admitCall } from '../admission/admit-call.js';
import { NO_CREDENTIAL } from '../admission/credential.js';
import { runIdempotent } from '../admission/idempotent.js';
import { refuseUnknown, validate } from '../admission/validate.js';
import type { OperationCall, OperationDeps, OperationOut } from './call.js';
import type { AnyRoute, Method, Req, Result } from './route.js';

export type { OperationCall, OperationDeps, OperationOut };

export async function runOperation(deps: OperationDeps, call: OperationCall, out: OperationOut): Promise<Result> {
  const { ctx, limits } = deps;
  const r = call.route;
  // Who calls, with what: the one admission path (src/transport/admission/admit-call.ts).
  const { caller, cred, json, key } = await admitCall(deps, call, out);
  // The door's own check of its arguments (an MCP tool's schema), then the operation's.
  call.check?.();
  const keyedBy = key === undefined ? undefined : { route: r, call, json, key, caller, credential: cred ?? NO_CREDENTIAL };
  if (r.precheck) {
    refuseUnknown(r.body, json ?? {}, 'body');
    if (!keyedBy) await r.precheck(json, ctx);
    else {
      // A precheck's refusal that writes (a decline of the principles, counted publicly) is the
      // keyed request's answer: kept, so a repeat answers it again without counting it again. A
      // refusal of the request's shape is not kept (as validation's is not); a pass goes on.
      const passed = await keyedPrecheck(ctx, keyedBy, out, r.precheck);
      if (passed !== true) return passed;
    }
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
      admitSecret: (known, check) => admitSecret(limits, call.ip, known, check),
    },
  };
  if (!keyedBy) return r.handler(req, ctx);
  return runIdempotent(ctx, keyedBy, out, (view) => r.handler(req, view));
}

/** Not an answer: the key has none stored yet, so the precheck runs (nothing is kept). */
class NotRun {}

/** A keyed request's precheck: a stored answer for the key comes back as it is; else the precheck
 * runs outside the key's transaction (its writes, a decline's count, are its own: the key's work
 * would roll them back with the refusal), and a refusal it answers (not one of the request's
 * shape) is then kept as the key's answer. Two such requests at once may both count. */
async function keyedPrecheck(
  ctx: OperationDeps['ctx'],
  keyedBy: Parameters<typeof runIdempotent>[1],
  out: OperationOut,
  precheck: NonNullable<AnyRoute['precheck']>,
): Promise<true | Result> {
  const notRun = new NotRun();
  try {
    return await runIdempotent(ctx, keyedBy, out, () => {
      throw notRun;
    });
  } catch (err) {
    if (err !== notRun) throw err;
  }
  try {
    await precheck(keyedBy.json, ctx);
    return true;
  } catch (err) {
    if (!(err instanceof CommonsError) || err.code === 'VALIDATION_FAILED') throw err;
    return runIdempotent(ctx, keyedBy, out, () => {
      throw err;
    });
  }
}
