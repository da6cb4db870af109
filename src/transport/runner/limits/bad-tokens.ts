// The bad-token budget (DECISIONS.md "Reliability promises"; docs/security.md "A shared address"):
// a token that fails verification spends a point of its address's `bad_token_ip` budget. Once that
// budget is spent, tokens not known valid from that address are refused before any database
// lookup, but a budget strangers spent never locks out a member: a token in the known record
// (known-tokens.ts) is looked up as usual, and one outside it still is at `bad_token_probe`'s rate
// (one a second per address). Random `cmn_` tokens thus get no bucket of their own; a valid token
// counts only as itself.
import { CommonsError } from '../../../domain/errors.js';
import type { Credential } from '../credential.js';
import { ipKey } from './keys.js';
import type { KnownTokens } from './known-tokens.js';
import type { Policy, PolicyName } from './policies.js';
import type { LimitSubject } from './subject.js';

/** What the budget uses of a limiter (rate-limiter-flexible's, or window-counter.ts). */
export interface BudgetLimiter {
  get(key: string): Promise<{ consumedPoints: number; msBeforeNext: number } | null>;
  consume(key: string): Promise<unknown>;
}

export class BadTokens {
  constructor(
    private readonly budget: BudgetLimiter,
    private readonly probes: BudgetLimiter,
    private readonly policies: Record<PolicyName, Policy>,
    private readonly known: KnownTokens,
  ) {}

  /** Refuses an unverified token (a member token outside the known record, or a stranger's)
   * while its address's budget is spent. */
  async refuseUnverified(who: LimitSubject): Promise<void> {
    if (!who.stranger && (!who.member || who.verified !== false)) return;
    await this.refuseSpentAddress(who.ip, who.member !== null);
  }

  /** RATE_LIMITED when the address has spent its `bad_token_ip` budget (also the operator
   * console's sign-in: refused before the token is compared). A member token still gets a lookup
   * at `bad_token_probe`'s rate. */
  async refuseSpentAddress(ip: string, member = false): Promise<void> {
    const res = await this.budget.get(ipKey(ip)).catch(() => null);
    if (!res || res.consumedPoints < this.policies.bad_token_ip.points) return;
    if (member && (await this.probe(ip))) return;
    const retry = member ? this.policies.bad_token_probe.durationS : Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    throw new CommonsError('RATE_LIMITED', `too many unknown tokens from this address; wait ${retry} s`, { retryAfterS: retry });
  }

  /** A credential presented from this address was wrong (a console sign-in): one point of its budget. */
  async countFailedAt(ip: string): Promise<void> {
    await this.budget.consume(ipKey(ip)).catch(() => {});
  }

  /** A presented token was unknown, revoked or expired: it counts against its address and leaves
   * the known record. Guest tokens are checked by their signature (no lookup to protect). */
  async countFailed(cred: Credential, ip: string): Promise<void> {
    if (!cred.token || cred.kind === 'guest') return;
    if (cred.key !== null) this.known.forget(cred.key);
    await this.countFailedAt(ip);
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
