// The lean read path (DESIGN.md "Reads are built once per change"; DECISIONS.md "Lists"): a GET of
// an open route whose page is already serialized (a route's `cached` hook) is answered inside the
// socket library's request callback, without a promise, a timer or a copy of the page. The caller
// is known without waiting (no credential: the address's provisional guest, once known; a
// provisional guest token, by its signature; a member token this node verified within
// TOKEN_CACHE_MS), the read is counted in memory, the query is validated by the route's schema, and
// the answer is the page's bytes stamped now, or 304 when If-None-Match names its ETag. Anything
// else (an owned guest token, a token to look up, a malformed header, counters in Redis, a
// refusal, a page to build from the database) returns null and takes the general pipeline, which
// answers the same request the same way (the same headers; test/e2e/fast-read.test.ts compares).
//
// Per request this allocates little: no header object (the answer names its few variable headers;
// the constant ones are written from one list by uws.ts), the client address read only when an
// anonymous read needs its provisional guest or the limits count it, an empty query's validation
// done once per route.
import type { GuestIssuer } from '../../domain/guests.js';
import type { Ctx } from '../../domain/ports.js';
import { memberForReadNow, type TokenDigest } from '../../domain/token-cache.js';
import { clientAddress } from '../admission/client-ip.js';
import { type Credential, credentialOf, guestClaims, NO_CREDENTIAL } from '../admission/credential.js';
import { classify } from '../admission/limits/policies.js';
import type { RateLimits } from '../admission/limits/rate-limits.js';
import { type Page, pageStatus, stampedBody } from '../runner/pages.js';
import type { AnyRoute } from '../runner/route.js';
import type { Router } from '../runner/router.js';
import type { PromMetrics } from './metrics.js';
import { guestHeaders } from './pipeline.js';

/** What the lean path needs of a request: the peer address is read only when needed (a system call). */
export interface LeanRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  peer(): string;
  /** Set by the lean path once it read the request's credential: the general path takes it on. */
  credential?: Credential | undefined;
}

/** A page's answer: 200 with its bytes stamped now, or 304. `extra` holds the variable headers as
 * name, value pairs (guest announcement, rate-limit state); CORS, request id, ETag, cache-control
 * and content type are written by the socket layer (uws.ts `writeLean`). */
export interface LeanAnswer {
  status: 200 | 304;
  etag: string;
  extra: readonly string[];
  body: Buffer | '';
}

export interface FastRead {
  (raw: LeanRequest): LeanAnswer | null;
  /** Requests answered by the lean path (the rest took the general pipeline). */
  answered: number;
}

const NONE: readonly string[] = [];

type Observer = { observe(seconds: number): void };

export function createFastRead(
  ctx: Ctx,
  router: Router,
  guests: GuestIssuer,
  limits: RateLimits | undefined,
  metrics: PromMetrics | undefined,
): FastRead {
  // Exact paths of routes with a `cached` hook: a map lookup instead of the trie walk. An empty
  // query is validated once per route (its defaults do not change).
  // Their metric children are kept with them (no label lookup per request).
  const cachedRoutes = new Map<string, { route: AnyRoute; empty: unknown; ok?: Observer; same?: Observer }>();
  for (const r of router.routes) {
    if (r.method !== 'GET' || !r.cached || r.auth !== 'none' || r.path.includes('{')) continue;
    const empty = r.query ? r.query.safeParse({}) : { success: true, data: {} };
    const observers = metrics ? { ok: metrics.requestChild('GET', r.path, 200), same: metrics.requestChild('GET', r.path, 304) } : {};
    cachedRoutes.set(r.path, { route: r, empty: empty.success ? empty.data : null, ...observers });
  }
  const fastRead: FastRead = Object.assign(
    (raw: LeanRequest): LeanAnswer | null => {
      const started = metrics ? performance.now() : 0;
      const hit = cachedRoutes.get(raw.path);
      // Only GET: uWS counts a HEAD answer (endWithoutBody) as unanswered unless an abort handler is attached.
      if (!hit || raw.method !== 'GET') return null;
      const r = hit.route;
      let query = hit.empty;
      if (raw.query !== '' && r.query) {
        const parsed = r.query.safeParse(Object.fromEntries(new URLSearchParams(raw.query)));
        if (!parsed.success) return null;
        query = parsed.data;
      }
      if (query === null) return null;
      const page = r.cached?.(query, ctx);
      if (!page) return null;
      const headers = raw.headers;
      // The request's one credential (src/transport/admission/credential.ts), handed on to the
      // general path when this one declines.
      const cred = credentialOf(headers);
      if (cred !== NO_CREDENTIAL) raw.credential = cred;
      // A malformed Authorization header is answered 401 by the general pipeline.
      if (cred.malformed) return null;
      const needsIp = cred.token === null || limits !== undefined;
      const ip = needsIp ? clientAddress(ctx.config.trustProxy, raw.peer(), headers['x-forwarded-for']) : '';
      let extra = NONE;
      if (cred.token === null) {
        // The address's provisional guest (src/domain/guests.ts) in a token of this read's own, when
        // the address's number is already known.
        const p = guests.provisional(ip);
        if (p instanceof Promise) return null;
        extra = guestHeaders(p);
      } else if (cred.kind === 'member') {
        // A token found in the cache was verified by the general path, which marked it for the limits.
        if (!memberForReadNow(ctx, cred as TokenDigest)) return null;
      } else if (cred.kind === 'guest') {
        // A provisional token is the signature alone; an owned one is checked against the database.
        if (!guestClaims(cred, ctx)?.provisional) return null;
      } else return null;
      if (limits) {
        const cls = classify('GET', r);
        if (cls === 'read') {
          const state = limits.countReadNow(ip);
          if (!state) return null;
          extra = [...state, ...extra];
        } else if (cls !== 'none') return null;
      }
      const out = leanAnswer(page, headers['if-none-match'], extra);
      (out.status === 200 ? hit.ok : hit.same)?.observe((performance.now() - started) / 1000);
      fastRead.answered++;
      return out;
    },
    { answered: 0 },
  );
  return fastRead;
}

// The body is the page's reused buffer (pages.ts stampedBody): uws.ts writes it before returning.
function leanAnswer(page: Page, ifNoneMatch: string | undefined, extra: readonly string[]): LeanAnswer {
  const { status, body } = pageStatus(page, ifNoneMatch, stampedBody);
  return { status, etag: page.etag, extra, body };
}
