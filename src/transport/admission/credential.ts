// The one credential (DESIGN.md "One credential, one runner"): what a request presents (the
// Authorization bearer, else the X-Commons-Guest-Token header; a stream's `auth` op, its token) is
// read here, once per request, into one value that the limits, the caller's resolution and the
// token cache all take. A member token is digested here and nowhere else on the way in; a guest
// token's signature is checked at most once (memoized on the value). No other file reads an
// Authorization header or a guest-token header.
import { hash } from 'node:crypto';
import type { Ctx } from '../../domain/ports.js';
import { GUEST_PREFIX, type GuestClaims, MEMBER_PREFIX, safeEqual, verifyGuestToken } from '../../domain/tokens.js';

export type { GuestClaims };

export interface Credential {
  /** member: a cmn_ token; guest: a cmg_ token; other: any other token (the operator's, or a
   * stranger's); none: nothing presented. */
  readonly kind: 'none' | 'member' | 'guest' | 'other';
  /** The token presented (a bearer, else the guest-token header, else the `auth` op's); null when none. */
  readonly token: string | null;
  /** The token came as `Authorization: Bearer <token>` (the operator API reads only a bearer). */
  readonly bearer: boolean;
  /** An Authorization header that is present but not `Bearer <token>`. */
  readonly malformed: boolean;
  /** An X-Commons-Guest-Token header was sent (not empty), whatever else was. */
  readonly guestHeader: boolean;
  /** A member token's SHA-256 in base64: the one digest of the request (the token cache's key). */
  readonly digest: string | null;
  /** The same SHA-256 as bytes, as stored (derived from `digest` when first asked for). */
  readonly hash: Buffer | null;
  /** A member token's counting key (`tokenKeyOfHash` of `hash`): limits, known record, sessions. */
  readonly key: string | null;
  /** Memo: the guest token's claims once its signature was checked (null: invalid). */
  guest?: GuestClaims | null;
  /** Memo: the token is the operator's. */
  operator?: boolean;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The value itself: a member token's counting key is derived when first asked for (the lean read
 * path never needs it). */
class Presented implements Credential {
  guest?: GuestClaims | null;
  operator?: boolean;
  private bytes: Buffer | undefined;
  private counted: string | undefined;
  constructor(
    readonly kind: Credential['kind'],
    readonly token: string | null,
    readonly bearer: boolean,
    readonly malformed: boolean,
    readonly guestHeader: boolean,
    readonly digest: string | null,
  ) {}

  get hash(): Buffer | null {
    if (this.digest === null) return null;
    this.bytes ??= Buffer.from(this.digest, 'base64');
    return this.bytes;
  }

  /** `tokenKeyOfHash(hash)` of a member token. */
  get key(): string | null {
    if (this.digest === null) return null;
    this.counted ??= keyOfDigest(this.digest);
    return this.counted;
  }
}

/** Nothing presented: one shared value (an anonymous request allocates none). */
export const NO_CREDENTIAL: Credential = Object.freeze(new Presented('none', null, false, false, false, null));

let digests = 0;
/** Member tokens digested on the way in since start (a test counts one per request). */
export const credentialDigests = (): number => digests;

/** The credential a request's headers present. */
export function credentialOf(headers: Record<string, string>): Credential {
  const h = headers.authorization;
  const g = headers['x-commons-guest-token'];
  if (!h && g === undefined) return NO_CREDENTIAL;
  const bearer = h ? (BEARER.exec(h)?.[1] ?? null) : null;
  const malformed = Boolean(h) && bearer === null;
  const token = bearer ?? g ?? null;
  return make(token, bearer !== null, malformed, (g ?? '') !== '');
}

/** The credential of a token presented outside headers (a stream session's `auth`). */
export const credentialOfToken = (token: string): Credential => make(token, false, false, false);

/** The operator's own credential (the operator console runs the operator API with it). */
export const operatorCredential = (token: string): Credential => make(token, true, false, false);

function make(token: string | null, bearer: boolean, malformed: boolean, guestHeader: boolean): Credential {
  if (token === null) return new Presented('none', null, false, malformed, guestHeader, null);
  if (token.startsWith(MEMBER_PREFIX)) {
    digests++;
    // The stored hash (hashToken's SHA-256) in base64, in one call without a Hash object or a
    // Buffer (both cost more than the digest): this runs on every request that carries a member
    // token, the lean reads included.
    return new Presented('member', token, bearer, malformed, guestHeader, hash('sha256', token, 'base64'));
  }
  return new Presented(token.startsWith(GUEST_PREFIX) ? 'guest' : 'other', token, bearer, malformed, guestHeader, null);
}

/** `tokenKeyOfHash`: the first 22 base64url characters of the SHA-256, from its base64. */
const keyOfDigest = (digest: string): string => digest.slice(0, 22).replaceAll('+', '-').replaceAll('/', '_');

/** The counting key of a provisional guest token before its first write (its chat_guest key;
 * src/transport/admission/limits/rate-limits.ts). */
export const guestTokenKey = (cred: Credential): string => keyOfDigest(hash('sha256', cred.token as string, 'base64'));

/** A guest token's claims (its signature checked once per request), null when it is none or invalid. */
export function guestClaims(cred: Credential, ctx: Pick<Ctx, 'secret' | 'clock'>): GuestClaims | null {
  if (cred.kind !== 'guest') return null;
  if (cred.guest === undefined)
    cred.guest = verifyGuestToken(ctx.secret, cred.token as string, Math.floor(ctx.clock.now().getTime() / 1000));
  return cred.guest;
}

/** The token is the operator's (compared once per request, and only when it could be: a member or
 * guest token is compared only to an operator token with the same prefix). */
export function isOperator(cred: Credential, ctx: Pick<Ctx, 'config'>): boolean {
  if (!cred.token) return false;
  if (cred.operator !== undefined) return cred.operator;
  const expected = ctx.config.operatorToken;
  const prefix = cred.kind === 'member' ? MEMBER_PREFIX : cred.kind === 'guest' ? GUEST_PREFIX : '';
  cred.operator = Boolean(expected) && (expected as string).startsWith(prefix) && safeEqual(cred.token, expected as string);
  return cred.operator;
}
