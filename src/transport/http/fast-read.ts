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
// Per request this allocates little: no header object (the answer is preformatted bytes: the
// status with the headers every answer of the page has, made once per page; the request id and
// the guest announcement written in place into a buffer kept per guest; uws.ts writes each in one
// native call), the client address read only when an anonymous read needs its provisional guest or
// the limits count it (peer.ts: its bytes, not uWS's text), an empty query's validation done once
// per route. The request comes as arguments, not in an object written per request: a young value
// stored into a long-lived object costs a write barrier and a remembered slot for the next
// scavenge (docs/benchmarks-history.md, 2026-11-29 afternoon: the lean read's profile).

import { performance } from 'node:perf_hooks';
import { readNonceInto } from '../../domain/guest-nonces.js';
import type { GuestIssuer, ProvisionalBase } from '../../domain/guests.js';
import type { Ctx } from '../../domain/ports.js';
import { memberForReadNow, type TokenDigest } from '../../domain/token-cache.js';
import { READ_NONCE_CHARS } from '../../domain/tokens.js';
import { UUID_CHARS, uuidInto } from '../../domain/uuid.js';
import { clientAddress } from '../admission/client-ip.js';
import { type Credential, credentialOf, guestClaims, NO_CREDENTIAL } from '../admission/credential.js';
import { classify } from '../admission/limits/policies.js';
import type { RateLimits } from '../admission/limits/rate-limits.js';
import { answerHead, preformatted } from '../edge/head.js';
import { type PeerSource, peerAddress } from '../edge/peer.js';
import { statusLine } from '../runner/envelope.js';
import { etagMatches, type Page, stampedBody } from '../runner/pages.js';
import type { AnyRoute } from '../runner/route.js';
import type { Router } from '../runner/router.js';
import type { PromMetrics } from './metrics.js';
import { CORS, guestHeaders } from './pipeline.js';

/** A page's answer: 200 with its bytes stamped now, or 304, as preformatted headers (the general
 * pipeline's headers for the same read: test/e2e/fast-read.test.ts compares them). Written at once
 * by the socket layer (uws.ts `writeLean`): `head` is rewritten by the next lean answer. */
export interface LeanAnswer {
  /** The status and every header of the answer but RateLimit, preformatted, for uWS to write in
   * one call: the headers every answer of this page with this status has (those every answer
   * carries, edge/head.ts, CORS, ETag, cache-control and, with a body, the content type, and
   * RateLimit-Policy when the limits count the read), then X-Request-Id and, when the read is
   * anonymous, the provisional guest's announcement (`whole`). */
  head: Buffer;
  /** The RateLimit header's value when the limits counted this read, else null. */
  rateLimit: string | null;
  body: Buffer | '';
}

export interface FastRead {
  /** A request as uws.ts read it; `peer` is read only when needed (a system call). */
  (method: string, path: string, query: string, headers: Record<string, string>, peer: PeerSource): LeanAnswer | null;
  /** Requests answered by the lean path (the rest took the general pipeline). */
  answered: number;
  /** The exact paths it may answer (GET only): uws.ts routes them to it without reading either. */
  readonly paths: readonly string[];
  /** The credential a declined request presented, once the lean path read it: the general path
   * takes it on (read once); the caller reads and clears it after a null. */
  presented: Credential | undefined;
}

type Observer = { observe(seconds: number): void };

interface Hit {
  route: AnyRoute;
  empty: unknown;
  /** The route's reads are counted by the limits in this process (RATE_LIMITS on, class read). */
  counted: boolean;
  /** Each page's preformatted heads, 200 and 304, made when first answered. */
  heads: WeakMap<Page, { ok?: Buffer; same?: Buffer }>;
  /** The page last answered 200 and its head (the common case without a lookup). */
  lastPage: Page | null;
  lastOk: Buffer;
  ok?: Observer;
  same?: Observer;
}

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
  const cachedRoutes = new Map<string, Hit>();
  for (const r of router.routes) {
    if (r.method !== 'GET' || !r.cached || r.auth !== 'none' || r.path.includes('{')) continue;
    const cls = classify('GET', r);
    // A class other than read or none is left to the general path (it has no lean count).
    if (limits && cls !== 'read' && cls !== 'none') continue;
    const empty = r.query ? r.query.safeParse({}) : { success: true, data: {} };
    const observers = metrics ? { ok: metrics.requestChild('GET', r.path, 200), same: metrics.requestChild('GET', r.path, 304) } : {};
    const hit: Hit = {
      route: r,
      empty: empty.success ? empty.data : null,
      counted: limits !== undefined && cls === 'read',
      heads: new WeakMap(),
      lastPage: null,
      lastOk: EMPTY,
    };
    cachedRoutes.set(r.path, Object.assign(hit, observers));
  }
  const head = answerHead(ctx.config);
  const constant = [...head, ...Object.entries(CORS).flat()];
  const headOf = (hit: Hit, page: Page, status: 200 | 304): Buffer => {
    let h = hit.heads.get(page);
    if (!h) {
      h = {};
      hit.heads.set(page, h);
    }
    if (status === 200)
      h.ok ??= preformatted(statusLine(200), [...constant, ...policyOf(hit), ...PAGE(page.etag), 'content-type', JSON_TYPE]);
    else h.same ??= preformatted(statusLine(304), [...constant, ...policyOf(hit), ...PAGE(page.etag)]);
    return (status === 200 ? h.ok : h.same) as Buffer;
  };
  const policyOf = (hit: Hit): string[] => (hit.counted && limits ? ['ratelimit-policy', limits.readPolicy] : []);
  // The answer is handed over before the next request is read: one object serves every answer.
  const out: LeanAnswer = { head: EMPTY, rateLimit: null, body: '' };
  // The path last answered and its route: a fresh string compared, not hashed for the map.
  let lastPath = '';
  let lastHit: Hit | undefined;
  const fastRead: FastRead = Object.assign(
    (method: string, path: string, rawQuery: string, headers: Record<string, string>, peer: PeerSource): LeanAnswer | null => {
      const started = metrics ? performance.now() : 0;
      let hit: Hit | undefined;
      if (path === lastPath) hit = lastHit;
      else {
        hit = cachedRoutes.get(path);
        if (hit) {
          lastPath = path;
          lastHit = hit;
        }
      }
      // Only GET: uWS counts a HEAD answer (endWithoutBody) as unanswered unless an abort handler is attached.
      if (!hit || method !== 'GET') return null;
      const r = hit.route;
      let query = hit.empty;
      if (rawQuery !== '' && r.query) {
        const parsed = r.query.safeParse(Object.fromEntries(new URLSearchParams(rawQuery)));
        if (!parsed.success) return null;
        query = parsed.data;
      }
      if (query === null) return null;
      const page = r.cached?.(query, ctx);
      if (!page) return null;
      // The request's one credential (src/transport/admission/credential.ts), handed on to the
      // general path when this one declines.
      const cred = credentialOf(headers);
      if (cred !== NO_CREDENTIAL) fastRead.presented = cred;
      // A malformed Authorization header is answered 401 by the general pipeline.
      if (cred.malformed) return null;
      const needsIp = cred.token === null || hit.counted;
      const trust = ctx.config.trustProxy;
      const ip = needsIp ? clientAddress(trust, peerAddress(peer), trust ? headers['x-forwarded-for'] : undefined) : '';
      let own: Buffer = ID_ONLY;
      if (cred.token === null) {
        // The address's provisional guest (src/domain/guests.ts) in a token of this read's own, when
        // the address's number is already known.
        const base = guests.provisionalBase(ip);
        if (base === null) return null;
        own = announcing(base);
      } else if (cred.kind === 'member') {
        // A token found in the cache was verified by the general path, which marked it for the limits.
        if (!memberForReadNow(ctx, cred as TokenDigest)) return null;
      } else if (cred.kind === 'guest') {
        // A provisional token is the signature alone; an owned one is checked against the database.
        if (!guestClaims(cred, ctx)?.provisional) return null;
      } else return null;
      let rateLimit: string | null = null;
      if (hit.counted) {
        rateLimit = (limits as RateLimits).countReadNow(ip);
        if (rateLimit === null) return null;
      }
      if (cred !== NO_CREDENTIAL) fastRead.presented = undefined;
      // What pages.ts `pageStatus` answers, without an object per answer: 304 and no body when
      // If-None-Match names the page's ETag, else its bytes stamped now.
      const ifNoneMatch = headers['if-none-match'];
      let head: Buffer;
      if (ifNoneMatch !== undefined && etagMatches(ifNoneMatch, page.etag)) {
        head = headOf(hit, page, 304);
        out.body = '';
      } else {
        if (page !== hit.lastPage) {
          hit.lastOk = headOf(hit, page, 200);
          hit.lastPage = page;
        }
        head = hit.lastOk;
        out.body = stampedBody(page);
      }
      const all = whole(head, own);
      // This answer's request id and, for a guest's token, its nonce, written in place.
      uuidInto(all, all.length - own.length);
      if (own !== ID_ONLY) readNonceInto(all, all.length - READ_NONCE_CHARS);
      out.head = all;
      out.rateLimit = rateLimit;
      if (metrics) ((out.body === '' ? hit.same : hit.ok) as Observer).observe((performance.now() - started) / 1000);
      fastRead.answered++;
      return out;
    },
    { answered: 0, presented: undefined as Credential | undefined, paths: [...cachedRoutes.keys()] },
  );
  return fastRead;
}

const EMPTY = Buffer.alloc(0);
const JSON_TYPE = 'application/json; charset=utf-8';
/** The headers of a page's answer besides the constant ones (the general pipeline's `pageAnswer`). */
const PAGE = (etag: string): string[] => ['etag', etag, 'cache-control', 'no-cache'];

// An answer's whole head: the page's head, then `x-request-id: ` and the own headers (below), as
// one buffer per own headers, rebuilt when the page's head changes; the id and the nonce are
// rewritten in place by each answer (written before the next). One native call for every header
// instead of two (a call with buffers costs uWS.js their backing stores, about 50-100 ns a read).
const ID_NAME = Buffer.from('\r\nx-request-id: ', 'latin1');
interface Whole {
  head: Buffer;
  all: Buffer;
}
const wholes = new WeakMap<Buffer, Whole>();
let lastOwn: Buffer = EMPTY;
let lastWhole: Whole = { head: EMPTY, all: EMPTY };
function whole(head: Buffer, own: Buffer): Buffer {
  let w = own === lastOwn ? lastWhole : wholes.get(own);
  if (w === undefined) {
    w = { head: EMPTY, all: EMPTY } as Whole;
    wholes.set(own, w);
  }
  if (w.head !== head) {
    // Its own memory, not a slice of node's pool (kept for a window, edge/head.ts `preformatted`).
    const all = Buffer.allocUnsafeSlow(head.length + ID_NAME.length + own.length);
    head.copy(all, 0);
    ID_NAME.copy(all, head.length);
    own.copy(all, head.length + ID_NAME.length);
    w.head = head;
    w.all = all;
  }
  lastOwn = own;
  lastWhole = w;
  return w.all;
}

/** The own headers of an answer without a guest to announce: the request id alone. */
const ID_ONLY = Buffer.alloc(UUID_CHARS);

// The own headers of an anonymous read, per provisional base (one a window per address): the
// request id, then the guest's number and token (`pipeline.ts` guestHeaders) with room for the
// read's nonce at the end: the template of the end of `whole`'s buffers.
const announced = new WeakMap<ProvisionalBase, Buffer>();
// The base last announced and its buffer (one client address under load: no lookup).
let lastBase: ProvisionalBase | null = null;
let lastAnnounced: Buffer = EMPTY;
function announcing(base: ProvisionalBase): Buffer {
  if (base === lastBase) return lastAnnounced;
  let b = announced.get(base);
  if (!b) {
    const placeholder = { number: base.number, token: base.base + 'A'.repeat(READ_NONCE_CHARS) };
    b = preformatted('0'.repeat(UUID_CHARS), guestHeaders(placeholder));
    announced.set(base, b);
  }
  lastBase = base;
  lastAnnounced = b;
  return b;
}
