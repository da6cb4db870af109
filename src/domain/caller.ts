// Who is making a request, as the transport resolved it from the credentials presented.
import type { IdentityRow } from '../store/identities.js';

export type { IdentityRow };

export type Caller = { kind: 'anonymous' } | { kind: 'guest'; guestNumber: number } | { kind: 'member'; member: IdentityRow };

export const UNTRUSTED = 'untrusted_user_content' as const;
