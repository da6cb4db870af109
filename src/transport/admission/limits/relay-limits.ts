// The relay's limits (docs/security.md "A flood of connections"), the stream's own kinds: open
// connections per address on a node (per-address.ts, the stream's counter) and a REQ budget per
// connection (bucket.ts, the stream's op budget), each answered in NIP-01's terms with the
// machine-readable prefix `rate-limited:`. Off with RATE_LIMITS=off, as every limit.
import type { Config } from '../../../config.js';
import { type Bucket, fullBucket, type Rate, take } from './bucket.js';
import { PerAddress } from './per-address.js';

export type ReqBudget = Bucket;

export class RelayLimits {
  private readonly perAddress: PerAddress;
  private readonly reqs: Rate;

  constructor(
    private readonly limits: Config['nostrRelay'],
    readonly on: boolean,
  ) {
    // Off: counted all the same (a release must match its admit), never refused.
    this.perAddress = new PerAddress(on ? limits.connectionsPerAddress : Number.POSITIVE_INFINITY);
    this.reqs = { burst: limits.reqBurst, perS: limits.reqsPerMinute / 60 };
  }

  /** Takes one of the address's connections; false when it holds all it may (nothing taken). */
  admit(address: string): boolean {
    return this.perAddress.take(address);
  }

  /** Gives back a connection `admit` took. */
  release(address: string): void {
    this.perAddress.give(address);
  }

  get connectionsRefusal(): string {
    return `rate-limited: at most ${this.limits.connectionsPerAddress} open connections per address`;
  }

  /** Spends one REQ of a connection's budget: null when allowed, else the CLOSED reason. */
  spend(budget: ReqBudget, now: number): string | null {
    if (!this.on) return null;
    const wait = take(budget, this.reqs, now);
    if (wait === null) return null;
    return `rate-limited: at most ${this.limits.reqBurst} REQs at once, then ${this.limits.reqsPerMinute} a minute; wait ${wait} s`;
  }

  newBudget(now: number): ReqBudget {
    return fullBucket(this.reqs, now);
  }
}
