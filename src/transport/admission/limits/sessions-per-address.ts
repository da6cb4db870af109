// Open stream sessions per client address (DECISIONS.md "Reliability promises"): while limits are
// on, an address holding SESSIONS_PER_ADDRESS sessions on this node has its next upgrade refused
// 429 before any credential is looked up; and every op a session sends spends from the session's
// own budget (bucket.ts), on top of the caller's write budget for a write.
import { type Bucket, fullBucket, type Rate, take } from './bucket.js';
import { PerAddress } from './per-address.js';

export const SESSIONS_PER_ADDRESS = 64;

/** Every op a session sends spends from one budget: a burst of OPS_BURST, refilled at OPS_PER_S;
 * an op over budget is refused RATE_LIMITED, not run. */
export const OPS_PER_S = 20;
export const OPS_BURST = 60;
const OPS: Rate = { burst: OPS_BURST, perS: OPS_PER_S };

export const sessionsPerAddress = (): PerAddress => new PerAddress(SESSIONS_PER_ADDRESS);
export type SessionsPerAddress = PerAddress;

/** Seconds to wait when the session's budget is spent, else null (and one op is spent). */
export function spendOp(session: { budget: Bucket | null }, now: number): number | null {
  session.budget ??= fullBucket(OPS, now);
  return take(session.budget, OPS, now);
}
