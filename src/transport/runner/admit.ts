// The credential step every way in takes (DESIGN.md "One credential, one runner"): an operation
// (REST, MCP, A2A, a stream op), a stream upgrade and a stream `auth` resolve the request's one
// credential (credential.ts) the same way, with the same bad-token budget around the lookup
// (DECISIONS.md "Reliability promises"): a token that fails spends its address's budget, a token
// found valid joins the known record, and (where no limit class ran first) an address over its
// budget has unknown tokens refused before any lookup.
import { CommonsError } from '../../domain/errors.js';
import type { Credential } from './credential.js';
import type { RateLimits } from './limits/rate-limits.js';
import type { Resolved } from './resolve-caller.js';

export interface Presented {
  cred: Credential;
  /** The client address (TRUST_PROXY applied). */
  ip: string;
  /** Refuse unknown tokens of an address over budget here (false where the limits ran first). */
  gate: boolean;
}

export async function admit<T extends Resolved>(limits: RateLimits | undefined, p: Presented, resolve: () => Promise<T>): Promise<T> {
  if (limits && p.gate && p.cred.token) await limits.gate(p.cred, p.ip);
  let resolved: T;
  try {
    resolved = await resolve();
  } catch (err) {
    if (limits && err instanceof CommonsError && err.code === 'UNAUTHORIZED') await limits.countFailedToken(p.cred, p.ip);
    throw err;
  }
  if (limits && resolved.caller.kind === 'member') limits.markVerified(p.cred);
  return resolved;
}
