// Who is making a request, as the transport resolved it from the credentials presented.
import type { IdentityRow } from '../store/identities.js';

export type { IdentityRow };

export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'guest'; guestNumber: number }
  /** `tokenHash`: the member was read from the node's token cache; a write that accepts such a
   * caller checks in its own statement that this hash still names the member (chat posts). */
  | { kind: 'member'; member: IdentityRow; tokenHash?: Buffer };

export const UNTRUSTED = 'untrusted_user_content' as const;
