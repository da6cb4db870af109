// Resolves the caller from the credentials a request presents (spec 5; DECISIONS.md).
import type { Caller } from '../../domain/caller.js';
import { fail } from '../../domain/errors.js';
import { type GuestIssuer, resolveGuestToken } from '../../domain/guests.js';
import { resolveMemberToken } from '../../domain/identity.js';
import type { Ctx } from '../../domain/ports.js';
import { memberForRead } from '../../domain/token-cache.js';
import { GUEST_PREFIX, hashToken, MEMBER_PREFIX, safeEqual } from '../../domain/tokens.js';
import type { AuthMode } from './route.js';

export interface Resolved {
  caller: Caller;
  /** A fresh guest identity to announce in the response headers. */
  issued?: { number: string; token: string };
}

const STALE_GUEST_NEXT = { method: 'POST', path: '/api/v1/ai/register', doc: 'register for a permanent identity, or call without a token' };

const isOperatorToken = (ctx: Ctx, token: string): boolean =>
  Boolean(ctx.config.operatorToken) && safeEqual(token, ctx.config.operatorToken as string);

export function bearerOf(headers: Record<string, string>): string | null {
  const h = headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? (m[1] as string) : null;
}

/**
 * How a member token is checked on an open route: `database` (member routes and most writes),
 * `cache` (a GET: the node's token cache, src/domain/token-cache.ts), `in-write` (the cache, and the
 * caller carries the token's hash for the write to check in its own statement: chat posts).
 */
export type TokenCheck = 'database' | 'cache' | 'in-write';

export async function resolveCaller(
  ctx: Ctx,
  guests: GuestIssuer,
  headers: Record<string, string>,
  mode: AuthMode,
  check: TokenCheck = 'database',
): Promise<Resolved> {
  const bearer = bearerOf(headers);
  if (mode === 'operator') {
    const expected = ctx.config.operatorToken;
    if (!expected) fail('UNAUTHORIZED', 'the operator API is closed on this instance (OPERATOR_TOKEN unset)');
    if (!bearer || !safeEqual(bearer, expected as string)) fail('UNAUTHORIZED', 'operator token required');
    return { caller: { kind: 'anonymous' } };
  }
  const token = bearer ?? headers['x-commons-guest-token'] ?? null;
  let caller: Caller = { kind: 'anonymous' };
  // A credential that is presented but unknown, revoked or expired answers 401 on every route,
  // also where one is optional, so an agent learns its token is dead (DECISIONS.md "Reliability
  // promises"); only a request without credentials becomes a new guest.
  if (token?.startsWith(MEMBER_PREFIX)) {
    const cached = check !== 'database' && mode === 'none';
    const member = cached ? await memberForRead(ctx, token) : await resolveMemberToken(ctx, token);
    if (!member) fail('UNAUTHORIZED', 'this token is unknown, revoked or rotated away; recover the identity with its key');
    caller = { kind: 'member', member: member as NonNullable<typeof member> };
    if (cached && check === 'in-write') caller.tokenHash = hashToken(token);
  } else if (token?.startsWith(GUEST_PREFIX)) {
    const guestNumber = await resolveGuestToken(ctx, token);
    if (guestNumber === null)
      fail('UNAUTHORIZED', 'this guest token is unknown or expired; send no token for a new guest', { next: STALE_GUEST_NEXT });
    caller = { kind: 'guest', guestNumber: guestNumber as number };
  } else if (token && (mode === 'member' || !isOperatorToken(ctx, token))) {
    // The operator token is a known credential where anyone may call (/metrics reads it;
    // DECISIONS.md "Operator"), never a member's.
    fail('UNAUTHORIZED', 'unrecognised token: member tokens start with cmn_, guest tokens with cmg_');
  }
  if (mode === 'member' && caller.kind !== 'member') {
    fail('REGISTRATION_REQUIRED', 'this operation is open to registered identities only; register first');
  }
  if (caller.kind !== 'anonymous') return { caller };
  // First machine request: a temporary identity, announced in headers, with nothing written.
  const g = await guests.issue();
  return { caller: { kind: 'guest', guestNumber: g.guestNumber }, issued: { number: g.number, token: g.token } };
}
