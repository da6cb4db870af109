// A token bucket: the budget of one connection's requests (a stream session's ops, a relay
// connection's REQs; DECISIONS.md "Reliability promises"): a burst, refilled at a steady rate.
// Held by the connection itself, so it needs no lookup and ends with it.

export interface Bucket {
  tokens: number;
  at: number;
}

export interface Rate {
  burst: number;
  /** Tokens added per second. */
  perS: number;
}

export const fullBucket = (rate: Rate, now: number): Bucket => ({ tokens: rate.burst, at: now });

/** Spends one token: null when there was one, else the whole seconds to wait (nothing spent). */
export function take(b: Bucket, rate: Rate, now: number): number | null {
  b.tokens = Math.min(rate.burst, b.tokens + ((now - b.at) / 1000) * rate.perS);
  b.at = now;
  if (b.tokens < 1) return Math.max(1, Math.ceil((1 - b.tokens) / rate.perS));
  b.tokens -= 1;
  return null;
}
