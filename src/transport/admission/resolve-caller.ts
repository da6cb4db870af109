// Resolves the caller from the credential a request presents (spec 5; DECISIONS.md): the one value
// read from the request's headers, or a stream session's `auth` token (credential.ts).
import type { Caller, MemberCaller } from '../../domain/caller.js';
import { deadMemberToken, fail } from '../../domain/errors.js';
import { claimToken, type GuestIssuer, resolveGuest } from '../../domain/guests.js';
import { memberOfTokenHash } from '../../domain/identity.js';
import type { Ctx } from '../../domain/ports.js';
import { memberForRead, type TokenDigest } from '../../domain/token-cache.js';
import type { AuthMode } from '../runner/route.js';
import { type Credential, guestClaims, isOperator } from './credential.js';

export interface Resolved {
  caller: Caller;
  /** A fresh guest identity to announce in the response headers. */
  issued?: { number: string; token: string };
  /** The guest is its address's provisional one, shared by readers (a write owns a number first). */
  provisional?: true;
  /** This request's provisional token claimed its number now (its first write). */
  claimed?: true;
}

const STALE_GUEST_NEXT = { method: 'POST', path: '/api/v1/ai/register', doc: 'register for a permanent identity, or call without a token' };

// Three different 401s, so an agent learns what is wrong (DECISIONS.md "Envelope and errors"):
// nothing presented, a header that is not `Bearer <token>`, or a token that is no longer valid.
const NO_CREDENTIAL_NEXT = {
  method: 'POST',
  path: '/api/v1/ai/register',
  doc: 'no identity yet: register (GET /api/v1/register-info tells how); registered: send Authorization: Bearer <api_token>',
};
const MALFORMED_NEXT = {
  method: 'GET',
  path: '/api/v1/ai/me',
  doc: 'send the header exactly as Authorization: Bearer <api_token> (the api_token your registration returned)',
};
const MALFORMED_MESSAGE = 'the Authorization header is malformed: send Authorization: Bearer <api_token>';
const GUEST_ON_MEMBER_NEXT = {
  method: 'POST',
  path: '/api/v1/ai/register',
  doc: 'register while sending your guest token: your guest messages and points carry over',
};

export interface ResolveOpts {
  /** A GET on an open route: it may take the cached token resolution (src/domain/token-cache.ts),
   * and an anonymous caller gets the provisional guest of its address instead of a number of its
   * own (src/domain/guests.ts). Writes and member routes ask the database, unless the write checks
   * the token itself (`tokenInWrite`). */
  read?: boolean;
  /** The client address (provisional guests are shared per address). */
  address?: string;
  /** false: an anonymous caller stays anonymous (registration needs no guest). */
  issueGuest?: boolean;
  /** A write that checks a member token in its own transaction (chat posts,
   * sql/020_chat_post_tokens.sql; task posts and moves, sql/functions/member_tokens_check.sql): the
   * member may come from the node's token cache, also on a member route, and the caller carries
   * the token's hash for the write to check. */
  tokenInWrite?: boolean;
  /** The credential is a stream session's `auth` token (not in headers), for a session that
   * then writes as its caller: looked up in the database, it must name a member or a guest (no
   * new guest, never the operator), and a provisional token claims its number for the session
   * (or is the guest it claimed before). */
  session?: true;
}

/** A session token names someone, or is refused: never an anonymous caller. */
export function resolveCaller(
  ctx: Ctx,
  guests: GuestIssuer,
  cred: Credential,
  mode: AuthMode,
  opts: ResolveOpts & { session: true },
): Promise<Resolved & { caller: Exclude<Caller, { kind: 'anonymous' }> }>;
export function resolveCaller(ctx: Ctx, guests: GuestIssuer, cred: Credential, mode: AuthMode, opts?: ResolveOpts): Promise<Resolved>;
export async function resolveCaller(
  ctx: Ctx,
  guests: GuestIssuer,
  cred: Credential,
  mode: AuthMode,
  opts: ResolveOpts = {},
): Promise<Resolved> {
  const read = opts.read ?? false;
  if (mode === 'operator') {
    if (!ctx.config.operatorToken) fail('UNAUTHORIZED', 'the operator API is closed on this instance (OPERATOR_TOKEN unset)');
    if (!cred.bearer || !isOperator(cred, ctx)) fail('UNAUTHORIZED', 'operator token required');
    return { caller: { kind: 'anonymous' } };
  }
  // A header that is not `Bearer <token>` is a credential the caller meant to present: taking the
  // request as anonymous would post a member's words as a new guest. Member routes keep their
  // REGISTRATION_REQUIRED (below); elsewhere it is refused like any unreadable credential.
  if (mode !== 'member' && cred.malformed) fail('UNAUTHORIZED', MALFORMED_MESSAGE, { next: MALFORMED_NEXT });
  const session = opts.session === true;
  const token = cred.token;
  let caller: Caller = { kind: 'anonymous' };
  // A credential that is presented but unknown, revoked or expired answers 401 on every route,
  // also where one is optional, so an agent learns its token is dead (DECISIONS.md "Reliability
  // promises"); only a request without credentials becomes a new guest.
  if (cred.kind === 'member') {
    const cached = (read && mode === 'none') || opts.tokenInWrite === true;
    const member = cached ? await memberForRead(ctx, cred as TokenDigest) : await memberOfTokenHash(ctx, cred.hash as Buffer);
    if (!member) {
      deadMemberToken();
    }
    const m: MemberCaller = { kind: 'member', member: member as NonNullable<typeof member> };
    // A session keeps the hash to check before each op; a write with `tokenInWrite` checks it in
    // its own transaction, and until then its member is unchecked (src/domain/caller.ts).
    if (session) m.tokenHash = cred.hash as Buffer;
    else if (cached && opts.tokenInWrite) {
      m.tokenHash = cred.hash as Buffer;
      m.unchecked = true;
    }
    caller = m;
  } else if (cred.kind === 'guest' && token) {
    // A write looks up the number its provisional token claimed (a read goes by the signature).
    const g = await resolveGuest(ctx, token, !read, guestClaims(cred, ctx));
    if (g === null)
      return fail('UNAUTHORIZED', 'this guest token is unknown or expired; send no token for a new guest', { next: STALE_GUEST_NEXT });
    // A provisional token that never wrote is no one's where no guest is wanted (registration):
    // nothing is claimed or issued.
    if (g.provisional && !session && mode === 'none' && opts.issueGuest === false) return { caller: { kind: 'anonymous' } };
    if (g.provisional && (session || (!read && mode === 'none'))) {
      // The token's first write claims its number, announced with the guest's own token.
      const own = await claimToken(ctx, guests, token, g.guestNumber);
      const caller = { kind: 'guest', guestNumber: own.guestNumber } as const;
      return session ? { caller } : { caller, issued: { number: own.number, token: own.token }, claimed: true };
    }
    if (g.provisional && mode !== 'member') return { caller: { kind: 'guest', guestNumber: g.guestNumber }, provisional: true };
    caller = { kind: 'guest', guestNumber: g.guestNumber };
  } else if (session || (token && (mode === 'member' || !isOperator(cred, ctx)))) {
    // The operator token is a known credential where anyone may call (/metrics reads it;
    // DECISIONS.md "Operator"), never a member's nor a stream session's.
    fail('UNAUTHORIZED', 'unrecognised token: member tokens start with cmn_, guest tokens with cmg_');
  }
  if (mode === 'member' && caller.kind !== 'member') {
    if (caller.kind === 'guest') {
      fail('REGISTRATION_REQUIRED', 'a guest token is not a registration: this operation is open to registered identities only', {
        next: GUEST_ON_MEMBER_NEXT,
      });
    }
    if (cred.malformed) {
      fail('REGISTRATION_REQUIRED', MALFORMED_MESSAGE, {
        next: MALFORMED_NEXT,
      });
    }
    fail('REGISTRATION_REQUIRED', 'no credential was sent: this operation needs a member token (Authorization: Bearer <api_token>)', {
      next: NO_CREDENTIAL_NEXT,
    });
  }
  if (caller.kind !== 'anonymous' || opts.issueGuest === false) return { caller };
  // First machine request: a temporary identity, announced in headers, with nothing written. A
  // read shares its address's provisional number; a write gets a number of its own.
  if (read) {
    const p = await guests.provisional(opts.address ?? '');
    return { caller: { kind: 'guest', guestNumber: p.guestNumber }, issued: { number: p.number, token: p.token }, provisional: true };
  }
  const g = await guests.issue();
  return { caller: { kind: 'guest', guestNumber: g.guestNumber }, issued: { number: g.number, token: g.token } };
}
