// The bad-token budget (DECISIONS.md "Reliability promises"; docs/security.md "A shared address"):
// a token that fails verification spends a point of its address's `bad_token_ip` budget. Once that
// budget is spent, tokens not known valid from that address are refused before any database
// lookup, but a budget strangers spent never locks out a member: a token in the known record
// (known-tokens.ts) is looked up as usual, and one outside it still is at `bad_token_probe`'s rate
// (one a second per address). Random `cmn_` tokens thus get no bucket of their own; a valid token
// counts only as itself. The point is taken before the lookup, atomically (`reserve`), and given
// back when the token proves valid: N guesses sent at once get no more lookups than the budget.
import { CommonsError } from '../../../domain/errors.js';
import type { Credential } from '../credential.js';
import type { Held } from './held.js';
import { ipKey } from './keys.js';
import type { KnownTokens } from './known-tokens.js';
import type { Policy, PolicyName } from './policies.js';
import type { LimitSubject } from './subject.js';

/** What the budget uses of a limiter (rate-limiter-flexible's, or window-counter.ts). */
export interface BudgetLimiter {
  get(key: string): Promise<{ consumedPoints: number; msBeforeNext: number } | null>;
  consume(key: string): Promise<unknown>;
  reward(key: string, points: number): Promise<unknown>;
}

export class BadTokens {
  constructor(
    private readonly budget: BudgetLimiter,
    private readonly probes: BudgetLimiter,
    private readonly policies: Record<PolicyName, Policy>,
    private readonly known: KnownTokens,
  ) {}

  /** Before an unverified token (a member token outside the known record, or a stranger's) is
   * looked up: one point of its address's budget taken, or RATE_LIMITED when none is left (a
   * member token may still take the probe's lookup). */
  async reserve(who: LimitSubject): Promise<Held> {
    if (!who.stranger && (!who.member || who.verified !== false)) return 'none';
    return this.reserveAt(who.ip, who.member !== null);
  }

  /** One point of the address's budget for a credential about to be checked (also the operator
   * console's sign-in), or RATE_LIMITED. A limiter that cannot answer does not refuse. */
  async reserveAt(ip: string, member = false): Promise<Held> {
    try {
      await this.budget.consume(ipKey(ip));
      return 'point';
    } catch (e) {
      if (e instanceof Error) return 'none';
      if (member && (await this.probe(ip))) return 'probe';
      const left = (e as { msBeforeNext?: number }).msBeforeNext ?? 1000;
      const retry = member ? this.policies.bad_token_probe.durationS : Math.max(1, Math.ceil(left / 1000));
      throw new CommonsError('RATE_LIMITED', `too many unknown tokens from this address; wait ${retry} s`, { retryAfterS: retry });
    }
  }

  /** The checked credential was valid: the point it held goes back. */
  async release(ip: string, held: Held): Promise<void> {
    if (held === 'point') await this.budget.reward(ipKey(ip), 1).catch(() => {});
  }

  /** A presented token was unknown, revoked or expired: it counts against its address and leaves
   * the known record. Guest tokens are checked by their signature (no lookup to protect). */
  async countFailed(cred: Credential, ip: string, held: Held): Promise<void> {
    if (!cred.token || cred.kind === 'guest') return;
    if (cred.key !== null) this.known.forget(cred.key);
    // A reserved point (or the probe) already counted it; a token known valid until now did not.
    if (held === 'none') await this.budget.consume(ipKey(ip)).catch(() => {});
  }

  /** One lookup of an unknown member token while its address is over budget, at the probe's rate. */
  private async probe(ip: string): Promise<boolean> {
    try {
      await this.probes.consume(ipKey(ip));
      return true;
    } catch {
      return false;
    }
  }
}
