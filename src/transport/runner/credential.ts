// One credential check for every way in (DESIGN.md "One credential, one runner"): an operation
// (REST, MCP, A2A, a stream op through the runner), a stream upgrade and a stream `auth` resolve a
// presented token the same way, with the same bad-token budget around the lookup
// (DECISIONS.md "Reliability promises"): a token that fails spends its address's budget, a token
// found valid joins the known record, and (where no HTTP limit ran first) an address over its
// budget has unknown tokens refused before any lookup.

import { CommonsError } from '../../domain/errors.js';
import type { RateLimits } from './limits/rate-limits.js';
import type { Resolved } from './resolve-caller.js';

export interface Presented {
  /** The token presented (a bearer, or the `auth` op's), null when none. */
  token: string | null;
  /** The client address (TRUST_PROXY applied). */
  ip: string;
  /** Refuse unknown tokens of an address over budget here (false where the HTTP limits did). */
  gate: boolean;
}

export async function checkCredential<T extends Resolved>(
  limits: RateLimits | undefined,
  p: Presented,
  resolve: () => Promise<T>,
): Promise<T> {
  if (limits && p.gate && p.token) await limits.gateToken(p.token, p.ip);
  let resolved: T;
  try {
    resolved = await resolve();
  } catch (err) {
    if (limits && err instanceof CommonsError && err.code === 'UNAUTHORIZED') await limits.countFailedToken(p.token, p.ip);
    throw err;
  }
  if (limits && p.token && resolved.caller.kind === 'member') limits.markVerified(p.token);
  return resolved;
}
