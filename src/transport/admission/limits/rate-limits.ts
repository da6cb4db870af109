// Rate limits (DECISIONS.md "Rate limits"): per guest, per token and per IP, in Redis when
// REDIS_URL is set so they hold across nodes, in memory otherwise. Called by the runner
// (../operation.ts) before the body is parsed or the caller resolved, so a refused request costs
// nothing; it takes the request's one credential (../credential.ts) and class. Answers carry the
// IETF draft headers RateLimit-Policy and RateLimit; refusals answer 429 with Retry-After. A
// refused request re-blocks its key for a whole window, so a client that keeps sending while
// limited never regains its burst (it must go quiet for one window).
//
// The parts: policies.ts (names, defaults, classes), keys.ts (addresses), subject.ts (who is
// counted), known-tokens.ts and bad-tokens.ts (the bad-token budget), window-counter.ts and
// read-now.ts (the lean read path's synchronous count).
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { CommonsError } from '../../../domain/errors.js';
import type { Ctx } from '../../../domain/ports.js';
import { type Credential, guestTokenKey } from '../credential.js';
import { BadTokens, type BudgetLimiter } from './bad-tokens.js';
import type { Held } from './held.js';
import { ipKey } from './keys.js';
import { KnownTokens } from './known-tokens.js';
import { type LimitClass, POLICY_NAMES, type Policy, type PolicyName } from './policies.js';
import { countReadNow, readPolicyValue } from './read-now.js';
import { type LimitSubject, subjectOf } from './subject.js';
import { WindowCounter } from './window-counter.js';

type Limiter = RateLimiterMemory | RateLimiterRedis | WindowCounter;
type State = Pick<RateLimiterRes, 'remainingPoints' | 'msBeforeNext'>;

export class RateLimits {
  private readonly limiters = new Map<PolicyName, Limiter>();
  private readonly known: KnownTokens;
  private readonly bad: BadTokens;
  /** The read policy's counter when it lives in this process (the lean read path counts in it). */
  private readonly reads: WindowCounter | null;

  constructor(
    private readonly ctx: Ctx,
    readonly policies: Record<PolicyName, Policy>,
    redis: { client: Redis; prefix: string } | null,
    private readonly onRefused: (cls: LimitClass) => void = () => {},
    /** The number a provisional guest token claimed (src/domain/guests.ts), null before its first write. */
    private readonly claimOf: (token: string) => Promise<number | null> = async () => null,
  ) {
    this.known = new KnownTokens(ctx);
    for (const name of POLICY_NAMES) {
      const { points, durationS } = policies[name];
      // With Redis, an outage falls back to per-node memory counters rather than failing open or closed.
      const memory = new RateLimiterMemory({ points, duration: durationS, keyPrefix: `rl:${name}` });
      const limiter = redis
        ? new RateLimiterRedis({
            storeClient: redis.client,
            points,
            duration: durationS,
            keyPrefix: `${redis.prefix}rl:${name}`,
            rejectIfRedisNotReady: true,
            insuranceLimiter: memory,
          })
        : name === 'read'
          ? new WindowCounter(points, durationS)
          : memory;
      this.limiters.set(name, limiter);
    }
    const read = this.limiters.get('read');
    this.reads = read instanceof WindowCounter ? read : null;
    this.bad = new BadTokens(
      this.limiter('bad_token_ip') as BudgetLimiter,
      this.limiter('bad_token_probe') as BudgetLimiter,
      policies,
      this.known,
    );
  }

  private limiter(name: PolicyName): Limiter {
    return this.limiters.get(name) as Limiter;
  }

  /** Counts the request of class `cls`; sets the headers; throws RATE_LIMITED when any of its limits is spent. */
  async enforce(cred: Credential, ip: string, cls: LimitClass, headers: Record<string, string>): Promise<void> {
    if (cls === 'none' && cred.token === null) return;
    const who = subjectOf(this.ctx, this.known, cred, ip, cls);
    if (who === 'operator') return;
    await this.claimed(who);
    await this.consume(cls, who, headers);
  }

  /** Before a presented token is looked up, wherever it is presented (an operation, /metrics, a
   * stream upgrade or `auth`): an unverified one takes a point of its address's bad-token budget
   * at once, or is refused RATE_LIMITED (bad-tokens.ts). */
  async reserveLookup(cred: Credential, ip: string): Promise<Held> {
    if (!cred.token) return 'none';
    const who = subjectOf(this.ctx, this.known, cred, ip, 'none');
    return who === 'operator' ? 'none' : this.bad.reserve(who);
  }

  /** The looked-up token was valid: its point goes back, and a member token joins the known record. */
  async lookupPassed(cred: Credential, ip: string, held: Held, member: boolean): Promise<void> {
    await this.bad.release(ip, held);
    if (member) this.markVerified(cred);
  }

  /**
   * Counts one op of a caller known without request headers (a stream session's `chat`), against
   * the same policies and counters as HTTP: a guest's 6 chats a minute are 6 over both.
   */
  async enforceFor(cls: LimitClass, who: LimitSubject): Promise<void> {
    await this.consume(cls, who, {});
  }

  /** A read counted at once for the lean read path: its RateLimit header's value, or null when
   * the general path must decide (counters in Redis, or a refusal). */
  countReadNow(ip: string): string | null {
    return this.reads ? countReadNow(this.reads, this.policies.read, ipKey(ip)) : null;
  }

  /** The RateLimit-Policy header's value of every read counted at once. */
  get readPolicy(): string {
    return readPolicyValue(this.policies.read);
  }

  /** A provisional token's first write claimed `guestNumber` (counted under the token until now):
   * that write counts against the guest too, so its first minute holds the guest's limit. */
  async chargeGuest(guestNumber: number): Promise<void> {
    await this.limiter('chat_guest')
      .penalty(`g${guestNumber}`, 1)
      .catch(() => {});
  }

  /** A member token was found valid: from now on it counts only as itself. */
  markVerified(cred: Credential): void {
    if (cred.key !== null) this.known.remember(cred.key);
  }

  /** Adds the keys of tokens valid now (at boot: the most recently active members' first). */
  know(keys: Iterable<string>): void {
    for (const k of keys) this.known.remember(k);
  }

  /** A presented token was unknown, revoked or expired (bad-tokens.ts). */
  countFailedToken(cred: Credential, ip: string, held: Held): Promise<void> {
    return this.bad.countFailed(cred, ip, held);
  }

  /** A credential checked without a lookup to protect but with guesses to bound (the operator
   * console's sign-in): a point of the address's budget, or RATE_LIMITED; `release` gives it back. */
  reserveAt(ip: string): Promise<Held> {
    return this.bad.reserveAt(ip);
  }

  release(ip: string, held: Held): Promise<void> {
    return this.bad.release(ip, held);
  }

  /** A provisional token's subject: the guest it claimed, or (before its first write) the token. */
  private async claimed(who: LimitSubject): Promise<void> {
    if (who.provisional === undefined) return;
    who.guest = await this.claimOf(who.provisional.token as string);
    if (who.guest === null) who.guestKey = `p${guestTokenKey(who.provisional)}`;
  }

  /** The (policy, key) pairs one request or op of class `cls` counts against. */
  private keys(who: LimitSubject, cls: LimitClass): [PolicyName, string][] {
    const ip = ipKey(who.ip);
    switch (cls) {
      case 'none':
        return [];
      case 'read':
        return [['read', ip]];
      case 'register':
      case 'recover':
        return [[cls, ip]];
      case 'write':
        return who.member ? [['write', who.member]] : [['write_ip', ip]];
      case 'chat':
        if (who.member) return [['write', who.member]];
        if (who.guest !== null || who.guestKey !== undefined)
          return [
            ['chat_guest', who.guestKey ?? `g${who.guest}`],
            ['chat_ip', ip],
          ];
        return [['chat_ip', ip]];
    }
  }

  private async consume(cls: LimitClass, who: LimitSubject, headers: Record<string, string>): Promise<void> {
    const keys = this.keys(who, cls);
    if (keys.length === 0) return;
    const results = await Promise.all(
      keys.map(async ([name, key]) => {
        const limiter = this.limiter(name);
        try {
          return { name, res: (await limiter.consume(key)) as State, refused: false };
        } catch (e) {
          if (e instanceof Error) throw e;
          // Refused: block the key for a whole window from now (see the header comment).
          const res = await limiter.block(key, this.policies[name].durationS);
          return { name, res: res as State, refused: true };
        }
      }),
    );
    headers['ratelimit-policy'] = results
      .map((r) => `"${r.name}";q=${this.policies[r.name].points};w=${this.policies[r.name].durationS}`)
      .join(', ');
    headers.ratelimit = results
      .map((r) => `"${r.name}";r=${r.refused ? 0 : Math.max(0, r.res.remainingPoints)};t=${Math.ceil(r.res.msBeforeNext / 1000)}`)
      .join(', ');
    const refused = results.filter((r) => r.refused);
    if (refused.length === 0) return;
    this.onRefused(cls);
    const retry = Math.max(...refused.map((r) => Math.ceil(r.res.msBeforeNext / 1000)), 1);
    throw new CommonsError('RATE_LIMITED', `rate limit ${refused.map((r) => r.name).join(', ')} exceeded; wait ${retry} s`, {
      retryAfterS: retry,
    });
  }
}
