// The lean read path (DESIGN.md "Reads are built once per change"; DECISIONS.md "Lists"): a GET of
// an open route whose page is already serialized (a route's `cached` hook) is answered inside the
// socket library's request callback, without a promise, a timer or a copy of the page. The caller
// is known without waiting (no credential: the address's provisional guest, once known; a
// provisional guest token, by its signature; a member token this node verified within
// TOKEN_CACHE_MS), the read is counted in memory, the query is validated by the route's schema, and
// the answer is the page's bytes stamped now, or 304 when If-None-Match names its ETag. Anything
// else (an owned guest token, a token to look up, a malformed header, counters in Redis, a
// refusal, a page to build from the database) returns null and takes the general pipeline, which
// answers the same request the same way.
import { randomUUID } from 'node:crypto';
import type { GuestIssuer, IssuedGuest } from '../../domain/guests.js';
import type { Ctx } from '../../domain/ports.js';
import { memberForReadNow } from '../../domain/token-cache.js';
import { GUEST_PREFIX, MEMBER_PREFIX, verifyGuestToken } from '../../domain/tokens.js';
import { bearerOf } from './auth.js';
import { clientAddress } from './client-ip.js';
import { classify, type RateLimits } from './limits.js';
import type { PromMetrics } from './metrics.js';
import { pageAnswer } from './pages.js';
import { announce, CORS, type RawRequest, type RawResponse } from './pipeline.js';
import type { AnyRoute } from './route.js';
import type { Router } from './router.js';

export interface FastRead {
  (raw: RawRequest): RawResponse | null;
  /** Requests answered by the lean path (the rest took the general pipeline). */
  answered: number;
}

export function createFastRead(
  ctx: Ctx,
  router: Router,
  guests: GuestIssuer,
  limits: RateLimits | undefined,
  metrics: PromMetrics | undefined,
): FastRead {
  // Exact paths of routes with a `cached` hook: a map lookup instead of the trie walk.
  const cachedRoutes = new Map<string, AnyRoute>();
  for (const r of router.routes)
    if (r.method === 'GET' && r.cached && r.auth === 'none' && !r.path.includes('{')) cachedRoutes.set(r.path, r);
  const fastRead: FastRead = Object.assign(
    (raw: RawRequest): RawResponse | null => {
      const started = metrics ? performance.now() : 0;
      const r = cachedRoutes.get(raw.path);
      // Only GET: uWS counts a HEAD answer (endWithoutBody) as unanswered unless an abort handler is attached.
      if (!r || raw.method !== 'GET') return null;
      const parsed = r.query ? r.query.safeParse(raw.query === '' ? {} : Object.fromEntries(new URLSearchParams(raw.query))) : null;
      if (parsed && !parsed.success) return null;
      const page = r.cached?.(parsed ? parsed.data : {}, ctx);
      if (!page) return null;
      const headers: Record<string, string> = { ...CORS, 'x-request-id': randomUUID() };
      // The caller: it decides only the guest headers of an open read.
      const bearer = bearerOf(raw.headers);
      // A malformed Authorization header is answered 401 by the general pipeline.
      if (raw.headers.authorization !== undefined && bearer === null) return null;
      const token = bearer ?? raw.headers['x-commons-guest-token'] ?? null;
      const ip = clientAddress(ctx.config.trustProxy, raw.ip, raw.headers['x-forwarded-for']);
      let issued: IssuedGuest | null = null;
      if (token === null) {
        // The address's provisional guest (src/domain/guests.ts), when it is already known.
        const p = guests.provisional(ip);
        if (p instanceof Promise) return null;
        issued = p;
      } else if (token.startsWith(MEMBER_PREFIX)) {
        // A token found in the cache was verified by the general path, which marked it for the limits.
        if (!memberForReadNow(ctx, token)) return null;
      } else if (token.startsWith(GUEST_PREFIX)) {
        // A provisional token is the signature alone; an owned one is checked against the database.
        const g = verifyGuestToken(ctx.secret, token, Math.floor(ctx.clock.now().getTime() / 1000));
        if (!g?.provisional) return null;
      } else return null;
      if (limits) {
        const cls = classify('GET', r);
        if (cls === 'read') {
          if (!limits.countReadNow(ip, headers)) return null;
        } else if (cls !== 'none') return null;
      }
      if (issued) announce(headers, { issued });
      const out = pageAnswer(page, raw.headers['if-none-match'], headers);
      metrics?.observeRequest(raw.method, r.path, out.status, (performance.now() - started) / 1000);
      fastRead.answered++;
      return out;
    },
    { answered: 0 },
  );
  return fastRead;
}
