// The credential step every way in takes (DESIGN.md "One credential, one runner"): an operation
// (REST, MCP, A2A, a stream op), a stream upgrade and a stream `auth` resolve the request's one
// credential (credential.ts) the same way, with the same bad-token budget around the lookup
// (DECISIONS.md "Reliability promises"): a token that fails spends its address's budget, a token
// found valid joins the known record, and an address over its budget has unknown tokens refused
// before any lookup (the point is reserved first, atomically: limits/bad-tokens.ts).
import { CommonsError } from '../../domain/errors.js';
import type { Credential } from './credential.js';
import type { Held } from './limits/held.js';
import type { RateLimits } from './limits/rate-limits.js';
import type { Resolved } from './resolve-caller.js';

export interface Presented {
  cred: Credential;
  /** The client address (TRUST_PROXY applied). */
  ip: string;
  /** What was already taken of the address's budget for this lookup (the runner reserves before
   * counting the request's class); reserved here when absent. */
  held?: Held;
}

export async function admit<T extends Resolved>(limits: RateLimits | undefined, p: Presented, resolve: () => Promise<T>): Promise<T> {
  // The failed check's cost is taken before the lookup (refused when none is left), so guesses
  // sent at once get no more lookups than the budget; a token that proves valid gives it back.
  const held = p.held ?? (limits ? await limits.reserveLookup(p.cred, p.ip) : 'none');
  let resolved: T;
  try {
    resolved = await resolve();
  } catch (err) {
    if (limits && err instanceof CommonsError && err.code === 'UNAUTHORIZED') await limits.countFailedToken(p.cred, p.ip, held);
    else await limits?.lookupPassed(p.cred, p.ip, held, false);
    throw err;
  }
  await limits?.lookupPassed(p.cred, p.ip, held, resolved.caller.kind === 'member');
  return resolved;
}

/** A secret checked outside the token table (the operator console's sign-in) under the same
 * budget: the address's bad-token point taken before the comparison (RATE_LIMITED when none is
 * left), kept when the check fails UNAUTHORIZED, given back otherwise. A secret already known to be
 * right (`known`: the operator's own token) takes no point, whatever strangers at its address
 * spent. */
export async function admitSecret<T>(limits: RateLimits | undefined, ip: string, known: boolean, check: () => Promise<T>): Promise<T> {
  const held = limits && !known ? await limits.reserveAt(ip) : 'none';
  try {
    const value = await check();
    await limits?.release(ip, held);
    return value;
  } catch (err) {
    if (!(err instanceof CommonsError && err.code === 'UNAUTHORIZED')) await limits?.release(ip, held);
    throw err;
  }
}
