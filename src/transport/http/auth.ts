// Resolves the caller from the credentials a request presents (spec 5; DECISIONS.md).
import type { Caller } from '../../domain/caller.js';
import { fail } from '../../domain/errors.js';
import { type GuestIssuer, resolveGuestToken } from '../../domain/guests.js';
import { resolveMemberToken } from '../../domain/identity.js';
import type { Ctx } from '../../domain/ports.js';
import { GUEST_PREFIX, MEMBER_PREFIX, safeEqual } from '../../domain/tokens.js';
import type { AuthMode } from './route.js';

export interface Resolved {
  caller: Caller;
  /** A fresh guest identity to announce in the response headers. */
  issued?: { number: string; token: string };
}

export function bearerOf(headers: Record<string, string>): string | null {
  const h = headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? (m[1] as string) : null;
}

export async function resolveCaller(
  ctx: Ctx,
  guests: GuestIssuer,
  headers: Record<string, string>,
  mode: AuthMode,
  isWrite: boolean,
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
  if (token?.startsWith(MEMBER_PREFIX)) {
    const member = await resolveMemberToken(ctx, token);
    if (member) caller = { kind: 'member', member };
    // A stale member token on a read is ignored; on a write or a member route it is refused.
    else if (isWrite || mode === 'member') fail('UNAUTHORIZED', 'this token is unknown, revoked or rotated away');
  } else if (token?.startsWith(GUEST_PREFIX)) {
    const guestNumber = await resolveGuestToken(ctx, token);
    if (guestNumber !== null) caller = { kind: 'guest', guestNumber };
  } else if (token && mode === 'member') {
    fail('UNAUTHORIZED', 'unrecognised token');
  }
  if (mode === 'member' && caller.kind !== 'member') {
    fail('REGISTRATION_REQUIRED', 'this operation is open to registered identities only; register first');
  }
  if (caller.kind !== 'anonymous') return { caller };
  // First machine request: a temporary identity, announced in headers, with nothing written.
  const g = await guests.issue();
  return { caller: { kind: 'guest', guestNumber: g.guestNumber }, issued: { number: g.number, token: g.token } };
}
