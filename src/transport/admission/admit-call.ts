// The admission path of an operation (DECISIONS.md "Every door, the same rules"), the one every
// door's requests take, in one order: the request's one credential (credential.ts) -> the caller's
// budget for the operation's class, a session's on top (limits/) with a token's lookup reserved
// first (admit.ts) -> the body decoded (decode.ts: bytes from HTTP, or the value a door decoded
// with the same rules) -> the Idempotency-Key's syntax (idempotent.ts) -> the caller resolved
// (resolve-caller.ts). What comes out is who calls, with what; the runner (../runner/operation.ts)
// then validates and runs the use case, once per key.
import type { Caller } from '../../domain/caller.js';
import { fail } from '../../domain/errors.js';
import type { OperationCall, OperationDeps, OperationOut } from '../runner/call.js';
import { admit } from './admit.js';
import { type Credential, credentialOf } from './credential.js';
import { decodeBody } from './decode.js';
import { idempotencyKeyOf, sentAnonymously } from './idempotent.js';
import { classify } from './limits/policies.js';
import { resolveCaller } from './resolve-caller.js';

export interface Admitted {
  caller: Caller;
  /** The credential read from the request (undefined for a stream session's op). */
  cred: Credential | undefined;
  /** The decoded body (undefined when the operation takes none). */
  json: unknown;
  /** The Idempotency-Key, when one was sent on an operation that takes one. */
  key: string | undefined;
}

/** The body as the call carries it: the request's bytes (HTTP, decoded here) or a value its door
 * decoded already by the same rules (stream frames, tool arguments, data parts, nested runs). */
function bodyOf(call: OperationCall): unknown {
  const b = call.body;
  if (b === undefined) return undefined;
  return 'bytes' in b ? decodeBody(b.bytes, b.contentType, call.route.form === true) : b.value;
}

export async function admitCall(deps: OperationDeps, call: OperationCall, out: OperationOut): Promise<Admitted> {
  const { limits } = deps;
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
    // The body is decoded after the limit (a refused request costs nothing) and before the caller.
    json = r.body ? bodyOf(call) : undefined;
    // A malformed Idempotency-Key is refused before anything is written (a guest's first row included).
    key = idempotencyKeyOf(r, call.headers, sentAnonymously(call, cred));
  } catch (err) {
    // Refused before the lookup: the point goes back.
    if (limits && cred) await limits.release(call.ip, held);
    throw err;
  }
  if (session) {
    if (r.auth === 'member' && session.caller.kind !== 'member') {
      fail('REGISTRATION_REQUIRED', 'this operation is open to registered identities only; register, then send auth {token}');
    }
    return { caller: session.caller, cred, json, key };
  }
  const credential = cred as Credential;
  const read = (call.method ?? r.method) === 'GET' || call.method === 'HEAD';
  const opts = {
    read,
    address: call.ip,
    tokenInWrite: r.tokenInWrite === true,
    ...(r.issuesGuest === false ? { issueGuest: false } : {}),
  };
  const presented = { cred: credential, ip: call.ip, held };
  const resolved = await admit(limits, presented, () => resolveCaller(deps.ctx, deps.guests, credential, r.auth, opts));
  if (resolved.issued) out.issued = resolved.issued;
  if (resolved.claimed && cls === 'chat' && resolved.caller.kind === 'guest') await limits?.chargeGuest(resolved.caller.guestNumber);
  return { caller: resolved.caller, cred, json, key };
}
