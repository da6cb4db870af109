// Rate limits (DECISIONS.md "Rate limits"): per guest, per token and per IP, in Redis when
// REDIS_URL is set so they hold across nodes, in memory otherwise. Called from one place in the
// pipeline, before the body is parsed or the caller resolved, so a refused request costs nothing.
// Answers carry the IETF draft headers RateLimit-Policy and RateLimit; refusals answer 429 with
// Retry-After. A refused request re-blocks its key for a whole window, so a client that keeps
// sending while limited never regains its burst (it must go quiet for one window).
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { CommonsError } from '../../domain/errors.js';
import type { Ctx } from '../../domain/ports.js';
import { GUEST_PREFIX, MEMBER_PREFIX, safeEqual, verifyGuestToken } from '../../domain/tokens.js';
import { bearerOf } from './auth.js';
import type { AnyRoute, LimitClass } from './route.js';

export type { LimitClass };

export const POLICY_NAMES = ['chat_guest', 'chat_ip', 'register', 'recover', 'write', 'write_ip', 'read', 'bad_token_ip'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export interface Policy {
  points: number;
  durationS: number;
}

/** Defaults of DECISIONS.md; recover and write_ip are ours (docs/operator.md). */
export const DEFAULT_POLICIES: Record<PolicyName, Policy> = {
  chat_guest: { points: 6, durationS: 60 },
  chat_ip: { points: 30, durationS: 60 },
  register: { points: 10, durationS: 3600 },
  recover: { points: 10, durationS: 3600 },
  write: { points: 60, durationS: 60 },
  write_ip: { points: 60, durationS: 60 },
  read: { points: 600, durationS: 60 },
  bad_token_ip: { points: 20, durationS: 60 },
};

export function classify(method: string, route: AnyRoute | undefined): LimitClass {
  if (method === 'OPTIONS') return 'none';
  // The class is declared on the route where it differs (chat, register, recover, none).
  return route?.limit ?? (method === 'GET' || method === 'HEAD' ? 'read' : 'write');
}

/** "chat_guest=6/60,register=10/3600": points per window in seconds, per policy. */
export function parsePolicies(spec: string | undefined): Record<PolicyName, Policy> {
  const out = { ...DEFAULT_POLICIES };
  for (const part of (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z_]+)=(\d+)\/(\d+)$/.exec(part);
    if (!m || !(POLICY_NAMES as readonly string[]).includes(m[1] as string) || Number(m[2]) < 1 || Number(m[3]) < 1) {
      throw new Error(`RATE_LIMIT_POLICY: cannot read "${part}" (expected name=points/seconds, names ${POLICY_NAMES.join(', ')})`);
    }
    out[m[1] as PolicyName] = { points: Number(m[2]), durationS: Number(m[3]) };
  }
  return out;
}

/** The key an IP is counted under: IPv4 as is, IPv6 by its /64 (one host usually holds a whole /64). */
export function ipKey(ip: string): string {
  try {
    const a = ipaddr.process(ip);
    if (a.kind() === 'ipv4') return a.toString();
    return `${(a as ipaddr.IPv6).parts
      .slice(0, 4)
      .map((p) => p.toString(16))
      .join(':')}::/64`;
  } catch {
    return ip;
  }
}

/** The key a member token is counted under (a hash: counters never hold a credential). */
export const tokenKey = (token: string): string => createHash('sha256').update(token).digest('base64url').slice(0, 22);

type Limiter = RateLimiterMemory | RateLimiterRedis;

/** What `countReadNow` uses of RateLimiterMemory (rate-limiter-flexible 11.4.0, pinned). */
interface MemoryInternals {
  getKey(key: string): string;
  _memoryStorage: { incrby(key: string, points: number, durationS: number): { consumedPoints: number; msBeforeNext: number } };
}

export interface LimitRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  ip: string;
}

/** Who is counted: a member token's key (tokenKey), a guest number, and the address. */
export interface LimitSubject {
  member: string | null;
  /** False for a member token this node has not yet seen valid (see `refuseUnverified`). Absent
   * means verified (a stream session holds a key only after `auth`). */
  verified?: boolean;
  guest: number | null;
  /** A provisional guest token presented (chat only), resolved to `guest` or `guestKey` by `enforce`. */
  provisionalToken?: string;
  /** The chat_guest key of a provisional token that has not written yet. */
  guestKey?: string;
  ip: string;
}

/** How many verified token keys a node remembers (oldest forgotten first; a forgotten token is
 * counted against its address once more, then remembered again). */
const VERIFIED_KEYS = 100_000;

export class RateLimits {
  private readonly limiters = new Map<PolicyName, Limiter>();
  private readonly verifiedKeys = new Set<string>();

  constructor(
    private readonly ctx: Ctx,
    readonly policies: Record<PolicyName, Policy>,
    redis: { client: Redis; prefix: string } | null,
    private readonly onRefused: (cls: LimitClass) => void = () => {},
    /** The number a provisional guest token claimed (src/domain/guests.ts), null before its first write. */
    private readonly claimOf: (token: string) => Promise<number | null> = async () => null,
  ) {
    for (const name of POLICY_NAMES) {
      const { points, durationS } = policies[name];
      const memory = new RateLimiterMemory({ points, duration: durationS, keyPrefix: `rl:${name}` });
      // With Redis, an outage falls back to per-node memory counters rather than failing open or closed.
      const limiter = redis
        ? new RateLimiterRedis({
            storeClient: redis.client,
            points,
            duration: durationS,
            keyPrefix: `${redis.prefix}rl:${name}`,
            rejectIfRedisNotReady: true,
            insuranceLimiter: memory,
          })
        : memory;
      this.limiters.set(name, limiter);
    }
  }

  /** Who a request is, for counting: the operator (not limited), a member token's key, a guest. */
  private subjectOf(req: LimitRequest, cls: LimitClass): LimitSubject | 'operator' {
    const bearer = bearerOf(req.headers);
    const operator = this.ctx.config.operatorToken;
    // The operator is not limited; a wrong operator token is (it is counted like any other caller).
    if (operator && bearer && safeEqual(bearer, operator)) return 'operator';
    const member = bearer?.startsWith(MEMBER_PREFIX) ? tokenKey(bearer) : null;
    const verified = member !== null && this.verifiedKeys.has(member);
    // Guests are told apart only for chat; other classes never verify a guest token.
    const guestToken = cls === 'chat' ? (bearer ?? req.headers['x-commons-guest-token']) : undefined;
    const guest = guestToken?.startsWith(GUEST_PREFIX)
      ? verifyGuestToken(this.ctx.secret, guestToken, Math.floor(this.ctx.clock.now().getTime() / 1000))
      : null;
    // A caller without a valid guest token is a new guest on every request: only its IP counts.
    // A provisional token is one guest (the number it claims): counted by that number once it has
    // written, by the token itself before (`enforce`).
    const subject: LimitSubject = { member, verified, guest: guest && !guest.provisional ? guest.guestNumber : null, ip: req.ip };
    if (guest?.provisional) subject.provisionalToken = guestToken as string;
    return subject;
  }

  /** A provisional token's subject: the guest it claimed, or (before its first write) the token. */
  private async claimed(who: LimitSubject): Promise<void> {
    if (who.provisionalToken === undefined) return;
    who.guest = await this.claimOf(who.provisionalToken);
    if (who.guest === null) who.guestKey = `p${tokenKey(who.provisionalToken)}`;
  }

  /** A provisional token's first write claimed `guestNumber` (counted under the token until now):
   * that write counts against the guest too, so its first minute holds the guest's limit. */
  async chargeGuest(guestNumber: number): Promise<void> {
    await (this.limiters.get('chat_guest') as Limiter).penalty(`g${guestNumber}`, 1).catch(() => {});
  }

  /** The pipeline found this request's member token valid: from now on it counts only as itself. */
  markVerified(headers: Record<string, string>): void {
    const bearer = bearerOf(headers);
    if (!bearer?.startsWith(MEMBER_PREFIX)) return;
    const key = tokenKey(bearer);
    if (this.verifiedKeys.has(key)) return;
    if (this.verifiedKeys.size >= VERIFIED_KEYS) this.verifiedKeys.delete(this.verifiedKeys.values().next().value as string);
    this.verifiedKeys.add(key);
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

  /**
   * Counts a read at once, for the lean read path (src/transport/http/fast-read.ts), when the
   * counters live in this process's memory: the RateLimit headers (name, value pairs) when counted
   * and allowed, null when the general path must decide (counters in Redis, or a refusal, which the general path
   * answers and re-blocks; it counts that request once more, which changes nothing for a key that
   * is already spent). The same counter as `enforce` (rate-limiter-flexible 11.4's in-memory store,
   * reached directly because its `consume` always answers through a promise).
   */
  countReadNow(ip: string): [string, string, string, string] | null {
    const limiter = this.limiters.get('read');
    if (!(limiter instanceof RateLimiterMemory)) return null;
    const inner = limiter as unknown as MemoryInternals;
    const res = inner._memoryStorage.incrby(inner.getKey(ipKey(ip)), 1, this.policies.read.durationS);
    const { points, durationS } = this.policies.read;
    if (res.consumedPoints > points) return null;
    return [
      'ratelimit-policy',
      `"read";q=${points};w=${durationS}`,
      'ratelimit',
      `"read";r=${points - res.consumedPoints};t=${Math.ceil(res.msBeforeNext / 1000)}`,
    ];
  }

  /** Counts the request; sets the headers; throws RATE_LIMITED when any of its limits is spent. */
  async enforce(req: LimitRequest, route: AnyRoute | undefined, headers: Record<string, string>): Promise<void> {
    const cls = classify(req.method, route);
    if (cls === 'none') return;
    const who = this.subjectOf(req, cls);
    if (who === 'operator') return;
    await this.refuseUnverified(who);
    await this.claimed(who);
    await this.consume(cls, who, headers);
  }

  /**
   * Unverified tokens count against the address (DECISIONS.md "Reliability promises"): a member
   * token that fails verification spends a point of its address's `bad_token_ip` budget
   * (`countFailedToken`), and once that budget is spent, tokens not yet seen valid from that
   * address are refused before any database lookup. Random `cmn_` tokens thus get no bucket of
   * their own; a valid token, once seen, counts only as itself.
   */
  private async refuseUnverified(who: LimitSubject): Promise<void> {
    if (!who.member || who.verified !== false) return;
    await this.refuseSpentAddress(who.ip);
  }

  /** RATE_LIMITED when the address has spent its `bad_token_ip` budget (also the operator
   * console's sign-in: refused before the token is compared). */
  async refuseSpentAddress(ip: string): Promise<void> {
    const res = await (this.limiters.get('bad_token_ip') as Limiter).get(ipKey(ip)).catch(() => null);
    if (!res || res.consumedPoints < this.policies.bad_token_ip.points) return;
    const retry = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    throw new CommonsError('RATE_LIMITED', `too many unknown tokens from this address; wait ${retry} s`, { retryAfterS: retry });
  }

  /** A credential presented from this address was wrong (a console sign-in): one point of its budget. */
  async countFailedAt(ip: string): Promise<void> {
    await (this.limiters.get('bad_token_ip') as Limiter).consume(ipKey(ip)).catch(() => {});
  }

  /** A presented member token was unknown, revoked or expired: it counts against its address. */
  async countFailedToken(req: LimitRequest): Promise<void> {
    if (!bearerOf(req.headers)?.startsWith(MEMBER_PREFIX)) return;
    await this.countFailedAt(req.ip);
  }

  /**
   * Counts one op of a caller known without request headers (a stream session's `chat`), against
   * the same policies and counters as HTTP: a guest's 6 chats a minute are 6 over both.
   */
  async enforceFor(cls: LimitClass, who: LimitSubject): Promise<void> {
    await this.consume(cls, who, {});
  }

  private async consume(cls: LimitClass, who: LimitSubject, headers: Record<string, string>): Promise<void> {
    const keys = this.keys(who, cls);
    if (keys.length === 0) return;
    const results = await Promise.all(
      keys.map(async ([name, key]) => {
        const limiter = this.limiters.get(name) as Limiter;
        try {
          return { name, res: await limiter.consume(key), refused: false };
        } catch (e) {
          if (e instanceof Error) throw e;
          // Refused: block the key for a whole window from now (see the header comment).
          const res = await limiter.block(key, this.policies[name].durationS);
          return { name, res: res as RateLimiterRes, refused: true };
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
