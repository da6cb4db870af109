// The relay's limits (docs/security.md "A flood of connections"), like the stream's: open
// connections per address on a node, and a REQ budget per connection (a burst, refilled at a
// steady rate), each answered in NIP-01's terms with the machine-readable prefix `rate-limited:`.
// Off with RATE_LIMITS=off, as every limit.
import type { Config } from '../../config.js';

export interface ReqBudget {
  tokens: number;
  at: number;
}

export class RelayLimits {
  private readonly perAddress = new Map<string, number>();

  constructor(
    private readonly limits: Config['nostrRelay'],
    readonly on: boolean,
  ) {}

  /** Takes one of the address's connections; false when it holds all it may (nothing taken). */
  admit(address: string): boolean {
    const n = this.perAddress.get(address) ?? 0;
    if (this.on && n >= this.limits.connectionsPerAddress) return false;
    this.perAddress.set(address, n + 1);
    return true;
  }

  /** Gives back a connection `admit` took. */
  release(address: string): void {
    const left = (this.perAddress.get(address) ?? 1) - 1;
    if (left > 0) this.perAddress.set(address, left);
    else this.perAddress.delete(address);
  }

  get connectionsRefusal(): string {
    return `rate-limited: at most ${this.limits.connectionsPerAddress} open connections per address`;
  }

  /** Spends one REQ of a connection's budget: null when allowed, else the CLOSED reason. */
  spend(budget: ReqBudget, now: number): string | null {
    if (!this.on) return null;
    const { reqBurst, reqsPerMinute } = this.limits;
    budget.tokens = Math.min(reqBurst, budget.tokens + ((now - budget.at) / 60_000) * reqsPerMinute);
    budget.at = now;
    if (budget.tokens >= 1) {
      budget.tokens -= 1;
      return null;
    }
    const wait = Math.max(1, Math.ceil(((1 - budget.tokens) * 60) / reqsPerMinute));
    return `rate-limited: at most ${reqBurst} REQs at once, then ${reqsPerMinute} a minute; wait ${wait} s`;
  }

  newBudget(now: number): ReqBudget {
    return { tokens: this.limits.reqBurst, at: now };
  }
}
