// Who a request is counted as (DECISIONS.md "Rate limits"), from the request's one credential
// (../credential.ts): the operator (not limited), a member token's key, a guest, the address.
import type { Ctx } from '../../../domain/ports.js';
import { type Credential, guestClaims, isOperator } from '../credential.js';
import type { KnownTokens } from './known-tokens.js';
import type { LimitClass } from './policies.js';

/** Who is counted: a member token's key, a guest number, and the address. */
export interface LimitSubject {
  member: string | null;
  /** False for a member token outside the known record (see bad-tokens.ts). Absent means
   * verified (a stream session holds a key only after `auth`). */
  verified?: boolean;
  /** A token that is neither a member's, a guest's nor the operator's (a guess at the operator
   * token, say): refused like an unknown member token while the address's budget is spent. */
  stranger?: boolean;
  guest: number | null;
  /** A provisional guest token's credential (chat only), resolved to `guest` or `guestKey` by `enforce`. */
  provisional?: Credential;
  /** The chat_guest key of a provisional token that has not written yet. */
  guestKey?: string;
  ip: string;
}

export function subjectOf(
  ctx: Pick<Ctx, 'config' | 'secret' | 'clock'>,
  known: KnownTokens,
  cred: Credential,
  ip: string,
  cls: LimitClass,
): LimitSubject | 'operator' {
  // The operator is not limited; a wrong operator token is (it is counted like any other caller).
  if (isOperator(cred, ctx)) return 'operator';
  const member = cred.key;
  const verified = member !== null && known.has(member);
  const stranger = cred.kind === 'other';
  // Guests are told apart only for chat; other classes never verify a guest token.
  const guest = cls === 'chat' ? guestClaims(cred, ctx) : null;
  // A caller without a valid guest token is a new guest on every request: only its IP counts.
  // A provisional token is one guest (the number it claims): counted by that number once it has
  // written, by the token itself before (`enforce`).
  const subject: LimitSubject = { member, verified, stranger, guest: guest && !guest.provisional ? guest.guestNumber : null, ip };
  if (guest?.provisional) subject.provisional = cred;
  return subject;
}
