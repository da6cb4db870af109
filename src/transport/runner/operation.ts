// One operation runner (DESIGN.md "One credential, one runner"): REST routes, MCP tools, A2A skills,
// stream ops and the console's forms all run an operation the same way: the admission path first
// (src/transport/admission/admit-call.ts: credential, budget, decoding, the key's syntax, the
// caller), then precheck, validation of params, query and body (admission/validate.ts), and the
// handler, once per Idempotency-Key (admission/idempotent.ts). Each transport races it against the
// one deadline (deadline.ts); the stream's upgrade and `auth` take the same credential step
// (admission/admit.ts) within the same deadline. The transports differ only in how a request
// arrives and how the result or error is written.

import { admitSecret } from '../admission/admit.js';
import { admitCall } from '../admission/admit-call.js';
import { NO_CREDENTIAL } from '../admission/credential.js';
import { runIdempotent } from '../admission/idempotent.js';
import { refuseUnknown, validate } from '../admission/validate.js';
import type { OperationCall, OperationDeps, OperationOut } from './call.js';
import type { Method, PrecheckRefusal, Req, Result } from './route.js';

export type { OperationCall, OperationDeps, OperationOut };

export async function runOperation(deps: OperationDeps, call: OperationCall, out: OperationOut): Promise<Result> {
  const { ctx, limits } = deps;
  const r = call.route;
  // Who calls, with what: the one admission path (src/transport/admission/admit-call.ts).
  const { caller, cred, json, key } = await admitCall(deps, call, out);
  // The door's own check of its arguments (an MCP tool's schema), then the operation's.
  call.check?.();
  const keyedBy = key === undefined ? undefined : { route: r, call, json, key, caller, credential: cred ?? NO_CREDENTIAL };
  const refusal = r.precheck?.(json);
  if (refusal) {
    refuseUnknown(r.body, json ?? {}, 'body');
    const { error, record } = refusal;
    if (!record) throw error;
    if (!keyedBy) {
      await record(ctx);
      throw error;
    }
    return keptRefusal(ctx, keyedBy, out, error, record);
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

/** Not an answer: the key has none stored yet, so the refusal is recorded (nothing is kept). */
class NotRun {}

/** A keyed request's recorded refusal (a decline, counted publicly) is its key's answer: a stored
 * answer for the key comes back as it is; else the refusal is recorded outside the key's
 * transaction (the key's work would roll it back with the refusal) and kept. Two such requests at
 * once may both count. Only a refusal pays this look-up: a request that passes goes straight on. */
async function keptRefusal(
  ctx: OperationDeps['ctx'],
  keyedBy: Parameters<typeof runIdempotent>[1],
  out: OperationOut,
  error: PrecheckRefusal['error'],
  record: NonNullable<PrecheckRefusal['record']>,
): Promise<Result> {
  const notRun = new NotRun();
  try {
    return await runIdempotent(ctx, keyedBy, out, () => {
      throw notRun;
    });
  } catch (err) {
    if (err !== notRun) throw err;
  }
  await record(ctx);
  return runIdempotent(ctx, keyedBy, out, () => {
    throw error;
  });
}
