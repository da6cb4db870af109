// Who is making a request, as the transport resolved it from the credentials presented.
import type { IdentityRow } from '../store/identities.js';

export type { IdentityRow };

export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'guest'; guestNumber: number }
  /** `tokenHash`: the hash of the token the member called with: a stream session's (checked
   * before each op), or, with `unchecked`, a token the node's cache resolved on a route whose write
   * checks it in its own transaction (`tokenInWrite`: chat posts, task posts and moves). An
   * unchecked member is no one's until that write: `member()` (src/transport/routes/identity.ts)
   * refuses it, `writer()` hands it on with its hash, and a keyed replay looks the token up first. */
  | MemberCaller;

export type MemberCaller = { kind: 'member'; member: IdentityRow; tokenHash?: Buffer; unchecked?: true };

export const UNTRUSTED = 'untrusted_user_content' as const;
