// The runner's part of idempotent writes (DECISIONS.md "Idempotent writes"): the key read from the
// `Idempotency-Key` header (the tool protocols and stream ops put their `idempotency_key` there),
// the caller's scope and the request's fingerprint; the write itself runs once through
// src/domain/idempotency.ts, and a repeat's stored answer comes back with `Idempotent-Replayed: true`.
import { createHash } from 'node:crypto';
import type { Caller } from '../../domain/caller.js';
import { CommonsError, deadMemberToken, fail } from '../../domain/errors.js';
import { refusalOf, runKeyed } from '../../domain/idempotency.js';
import { memberOfTokenHash } from '../../domain/identity.js';
import type { Ctx } from '../../domain/ports.js';
import type { OperationCall, OperationOut } from '../runner/call.js';
import { STATUS_OF } from '../runner/envelope.js';
import type { AnyRoute, Result } from '../runner/route.js';
import type { Credential } from './credential.js';
import { ipKey } from './limits/keys.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

/** 1-255 visible ASCII characters (RFC 9110 field value without spaces; DECISIONS.md). */
const KEY_SYNTAX = /^[\x21-\x7e]{1,255}$/;

/** Writes that take a key: every POST, PUT, PATCH and DELETE answering JSON data. */
export const takesKey = (r: AnyRoute): boolean => r.method !== 'GET' && !r.raw && !r.switchesTo;

/** The shortest key of a write sent without a credential, or of one whose answer carries a
 * credential (DECISIONS.md "Idempotent writes"): a random UUID's 36 characters pass. */
export const KEY_MIN_SHARED = 22;

/** The request's key, undefined without one (or on a route that takes none); a malformed key is
 * refused 400 VALIDATION_FAILED, and so is a short one where a guessable key would give away an
 * answer: on a write without a credential (people behind one address share its scope), and on a
 * write whose answer carries a credential (the stored answer is sealed under the key, so a copy of
 * the database must not be able to guess it; docs/security.md "A copy of the database"). */
export function idempotencyKeyOf(r: AnyRoute, headers: Record<string, string>, anonymous: boolean): string | undefined {
  const key = headers[IDEMPOTENCY_HEADER];
  if (key === undefined || !takesKey(r)) return undefined;
  if (!KEY_SYNTAX.test(key)) {
    fail('VALIDATION_FAILED', 'Idempotency-Key must be 1 to 255 visible ASCII characters', {
      fields: [{ path: 'Idempotency-Key', message: 'expected 1-255 characters from ! to ~ (no spaces)' }],
    });
  }
  if (key.length < KEY_MIN_SHARED && (anonymous || r.credentialAnswer === true)) {
    const why = anonymous ? 'a write sent without a credential' : 'a write whose answer carries a credential';
    fail('VALIDATION_FAILED', `Idempotency-Key of ${why} must be at least ${KEY_MIN_SHARED} characters: send a random UUID`, {
      fields: [{ path: 'Idempotency-Key', message: `at least ${KEY_MIN_SHARED} characters (a random UUID)` }],
      next: {
        method: r.method,
        path: r.path,
        doc: 'send the request again with Idempotency-Key: a random UUID (e.g. crypto.randomUUID())',
      },
    });
  }
  return key;
}

/** No credential at all (not even an unreadable one), and not a stream session: the address is
 * the scope. */
export const sentAnonymously = (call: OperationCall, cred: Credential | undefined): boolean =>
  call.session === undefined && cred !== undefined && cred.token === null && !cred.malformed && !cred.guestHeader;

/** Who a key belongs to: the member, the guest who presented its credential, the operator, else
 * the address. */
function scopeOf(r: AnyRoute, caller: Caller, call: OperationCall, cred: Credential): string {
  if (caller.kind === 'member') return `m:${caller.member.id}`;
  if (r.auth === 'operator') return 'o:';
  const presented = call.session !== undefined || (cred.bearer && cred.token !== null) || cred.guestHeader;
  if (caller.kind === 'guest' && presented) return `g:${caller.guestNumber}`;
  return `a:${ipKey(call.ip)}`;
}

/** What the request asks: the operation, its parameters and its body. */
function fingerprintOf(r: AnyRoute, call: OperationCall, json: unknown): Buffer {
  return createHash('sha256')
    .update(`${r.method} ${r.path}\n${JSON.stringify(call.params ?? {})}\n${JSON.stringify(json ?? null)}`)
    .digest();
}

export async function runIdempotent(
  ctx: Ctx,
  w: { route: AnyRoute; call: OperationCall; json: unknown; key: string; caller: Caller; credential: Credential },
  out: OperationOut,
  /** The keyed work, in the key's transaction: the route's handler, or its precheck (../runner/operation.ts). */
  work: (view: Ctx) => Promise<Result> | Result,
): Promise<Result> {
  const keyed = {
    scope: scopeOf(w.route, w.caller, w.call, w.credential),
    key: w.key,
    fingerprint: fingerprintOf(w.route, w.call, w.json),
  };
  const answers = {
    ofResult(r: Result) {
      if (!('data' in r) || 'page' in r) throw new Error(`${w.route.method} ${w.route.path} answers no JSON data to keep`);
      return { status: r.status ?? 200, data: r.data };
    },
    // A refusal is the request's answer and is kept; an outage or a bug is not (a retry runs again),
    // nor a credential the write itself found dead (a member's retry with its new token runs again).
    statusOfRefusal: (err: unknown) =>
      err instanceof CommonsError && STATUS_OF[err.code] < 500 && err.code !== 'UNAUTHORIZED' ? STATUS_OF[err.code] : null,
  };
  const o = await runKeyed(ctx, keyed, answers, async (view) => work(view));
  if (!o.replayed) return o.result;
  // A member the token cache resolved for a write that checks the token itself (src/domain/caller.ts)
  // has had no check yet: a stored answer is not handed to a token rotated or revoked since.
  const c = w.caller;
  if (c.kind === 'member' && c.unchecked && (await memberOfTokenHash(ctx, c.tokenHash as Buffer))?.id !== c.member.id) deadMemberToken();
  out.replayed = true;
  out.headers[REPLAYED_HEADER] = 'true';
  if ('error' in o.body) throw refusalOf(o.body);
  return { status: o.status, data: o.body.data };
}
