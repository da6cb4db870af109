// A read counted at once, for the lean read path (src/transport/http/fast-read.ts), when the
// counters live in this process's memory: the read policy's own window counter
// (window-counter.ts), the same windows the general path counts against.
import type { Policy } from './policies.js';
import type { WindowCounter } from './window-counter.js';

/** The RateLimit header's value when counted and allowed; null when the general path must decide
 * (a refusal, which it answers and re-blocks; it counts that request once more, which changes
 * nothing for a key that is already spent). RateLimit-Policy is `readPolicyValue`, the same for
 * every read. */
export function countReadNow(counter: WindowCounter, policy: Policy, key: string): string | null {
  const res = counter.take(key);
  if (res.consumedPoints > policy.points) return null;
  return `"read";r=${policy.points - res.consumedPoints};t=${Math.ceil(res.msBeforeNext / 1000)}`;
}

/** The RateLimit-Policy header's value of a read (what rate-limits.ts writes for the read class). */
export const readPolicyValue = (policy: Policy): string => `"read";q=${policy.points};w=${policy.durationS}`;
