// A read counted at once, for the lean read path (src/transport/http/fast-read.ts), when the
// counters live in this process's memory: the read policy's own window counter
// (window-counter.ts), the same windows the general path counts against.
import type { Policy } from './policies.js';
import type { WindowCounter } from './window-counter.js';

/** The RateLimit headers (name, value pairs) when counted and allowed; null when the general path
 * must decide (a refusal, which it answers and re-blocks; it counts that request once more, which
 * changes nothing for a key that is already spent). */
export function countReadNow(counter: WindowCounter, policy: Policy, key: string): [string, string, string, string] | null {
  const res = counter.take(key);
  const { points, durationS } = policy;
  if (res.consumedPoints > points) return null;
  return [
    'ratelimit-policy',
    `"read";q=${points};w=${durationS}`,
    'ratelimit',
    `"read";r=${points - res.consumedPoints};t=${Math.ceil(res.msBeforeNext / 1000)}`,
  ];
}
