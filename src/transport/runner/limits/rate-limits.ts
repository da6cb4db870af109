// Rate limits (DECISIONS.md "Rate limits"): per guest, per token and per IP, in Redis when
// REDIS_URL is set so they hold across nodes, in memory otherwise. Called from one place in the
// pipeline, before the body is parsed or the caller resolved, so a refused request costs nothing.
// Answers carry the IETF draft headers RateLimit-Policy and RateLimit; refusals answer 429 with
// Retry-After. A refused request re-blocks its key for a whole window, so a client that keeps
// sending while limited never regains its burst (it must go quiet for one window).
import type { Redis } from 'ioredis';
import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { CommonsError } from '../../../domain/errors.js';
import type { Ctx } from '../../../domain/ports.js';
import { TOKEN_ISSUED_TOPIC, TOKENS_TOPIC, type TokenChange } from '../../../domain/token-cache.js';
import { GUEST_PREFIX, hashToken, MEMBER_PREFIX, safeEqual, tokenKeyOfHash, verifyGuestToken } from '../../../domain/tokens.js';
import { presentedToken } from '../resolve-caller.js';
import type { AnyRoute, LimitClass } from '../route.js';

export type { LimitClass };

export const POLICY_NAMES = [
  'chat_guest',
  'chat_ip',
  'register',
  'recover',
  'write',
  'write_ip',
  'read',
  'bad_token_ip',
  'bad_token_probe',
] as const;
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
  // While an address's bad_token_ip budget is spent, a member token outside the known record is
  // still looked up this often (docs/security.md "A shared address").
  bad_token_probe: { points: 1, durationS: 1 },
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

/** The key a member token is counted under (a hash: counters never hold a credential); the same
 * as `tokenKeyOfHash` of its stored hash. */
export const tokenKey = (token: string): string => tokenKeyOfHash(hashToken(token));

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
  /** False for a member token outside the known record (see `refuseUnverified`). Absent means
   * verified (a stream session holds a key only after `auth`). */
  verified?: boolean;
  /** A bearer that is neither a member's, a guest's nor the operator's (a guess at the operator
   * token, say): refused like an unknown member token while the address's budget is spent. */
  stranger?: boolean;
  guest: number | null;
  /** A provisional guest token presented (chat only), resolved to `guest` or `guestKey` by `enforce`. */
  provisionalToken?: string;
  /** The chat_guest key of a provisional token that has not written yet. */
  guestKey?: string;
  ip: string;
}

/** How many known token keys a node remembers (oldest forgotten first; a forgotten token is
 * looked up at the probe's rate while its address's budget is spent, then remembered again). */
export const VERIFIED_KEYS = 100_000;

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
    // The known record spans nodes: a token issued (registered, rotated, recovered) on any node is
    // known on every node at once, so a member's first call elsewhere is never a stranger's.
    ctx.bus.subscribe(TOKEN_ISSUED_TOPIC, (m) => this.remember((m.data as { key?: string } | null)?.key));
    ctx.bus.subscribe(TOKENS_TOPIC, (m) => this.remember((m.data as TokenChange | null)?.keep ?? undefined));
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
    // Whichever header carries it, as the caller's resolution takes it (auth.ts).
    const token = presentedToken(req.headers);
    const operator = this.ctx.config.operatorToken;
    // The operator is not limited; a wrong operator token is (it is counted like any other caller).
    if (operator && token && safeEqual(token, operator)) return 'operator';
    const member = token?.startsWith(MEMBER_PREFIX) ? tokenKey(token) : null;
    const verified = member !== null && this.verifiedKeys.has(member);
    const stranger = token !== null && member === null && !token.startsWith(GUEST_PREFIX);
    // Guests are told apart only for chat; other classes never verify a guest token.
    const guestToken = cls === 'chat' ? (token ?? undefined) : undefined;
    const guest = guestToken?.startsWith(GUEST_PREFIX)
      ? verifyGuestToken(this.ctx.secret, guestToken, Math.floor(this.ctx.clock.now().getTime() / 1000))
      : null;
    // A caller without a valid guest token is a new guest on every request: only its IP counts.
    // A provisional token is one guest (the number it claims): counted by that number once it has
    // written, by the token itself before (`enforce`).
    const subject: LimitSubject = { member, verified, stranger, guest: guest && !guest.provisional ? guest.guestNumber : null, ip: req.ip };
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

  /** A member token was found valid: from now on it counts only as itself. */
  markVerified(token: string): void {
    if (token.startsWith(MEMBER_PREFIX)) this.remember(tokenKey(token));
  }

  /** Adds the keys of tokens valid now (at boot: the most recently active members' first). */
  know(keys: Iterable<string>): void {
    for (const k of keys) this.remember(k);
  }

  private remember(key: string | undefined): void {
    if (key === undefined || this.verifiedKeys.has(key)) return;
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
    if (cls === 'none' && presentedToken(req.headers) === null) return;
    const who = this.subjectOf(req, cls);
    if (who === 'operator') return;
    // Also on routes of no class (/metrics): a guess at a token is a guess wherever it is made.
    await this.refuseUnverified(who);
    await this.claimed(who);
    await this.consume(cls, who, headers);
  }

  /** The same gate for a token presented without an HTTP request (a stream upgrade or `auth`). */
  async gateToken(token: string, ip: string): Promise<void> {
    const who = this.subjectOf({ method: 'GET', path: '', headers: { authorization: `Bearer ${token}` }, ip }, 'none');
    if (who !== 'operator') await this.refuseUnverified(who);
  }

  /**
   * Unverified tokens count against the address (DECISIONS.md "Reliability promises"): a token
   * that fails verification spends a point of its address's `bad_token_ip` budget
   * (`countFailedToken`). Once that budget is spent, tokens not known valid from that address are
   * refused before any database lookup, but a budget strangers spent never locks out a member
   * (docs/security.md "A shared address"): a token in the known record (every token issued or
   * seen valid, on any node, and at boot the members' current tokens) is looked up as usual, and
   * one outside it still is at `bad_token_probe`'s rate (one a second per address). Random `cmn_`
   * tokens thus get no bucket of their own; a valid token counts only as itself.
   */
  private async refuseUnverified(who: LimitSubject): Promise<void> {
    if (!who.stranger && (!who.member || who.verified !== false)) return;
    await this.refuseSpentAddress(who.ip, who.member !== null);
  }

  /** RATE_LIMITED when the address has spent its `bad_token_ip` budget (also the operator
   * console's sign-in: refused before the token is compared). A member token still gets a lookup
   * at `bad_token_probe`'s rate. */
  async refuseSpentAddress(ip: string, member = false): Promise<void> {
    const res = await (this.limiters.get('bad_token_ip') as Limiter).get(ipKey(ip)).catch(() => null);
    if (!res || res.consumedPoints < this.policies.bad_token_ip.points) return;
    if (member && (await this.probe(ip))) return;
    const retry = member ? this.policies.bad_token_probe.durationS : Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    throw new CommonsError('RATE_LIMITED', `too many unknown tokens from this address; wait ${retry} s`, { retryAfterS: retry });
  }

  /** A credential presented from this address was wrong (a console sign-in): one point of its budget. */
  async countFailedAt(ip: string): Promise<void> {
    await (this.limiters.get('bad_token_ip') as Limiter).consume(ipKey(ip)).catch(() => {});
  }

  /** One lookup of an unknown member token while its address is over budget, at the probe's rate. */
  private async probe(ip: string): Promise<boolean> {
    try {
      await (this.limiters.get('bad_token_probe') as Limiter).consume(ipKey(ip));
      return true;
    } catch {
      return false;
    }
  }

  /** A presented token was unknown, revoked or expired: it counts against its address and leaves
   * the known record. Guest tokens are checked by their signature (no lookup to protect). */
  async countFailedToken(token: string | null, ip: string): Promise<void> {
    if (!token || token.startsWith(GUEST_PREFIX)) return;
    if (token.startsWith(MEMBER_PREFIX)) this.verifiedKeys.delete(tokenKey(token));
    await this.countFailedAt(ip);
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
