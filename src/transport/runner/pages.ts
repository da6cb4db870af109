// Serialized pages and entity tags. A hot read's page is serialized once per change of what it
// shows (the envelope up to its timestamp, as bytes) and served with a strong ETag naming the
// data; per request only the timestamp (the time of the response, spec envelope) is appended.
// A matching If-None-Match answers 304 with the ETag and no body.
import { createHash } from 'node:crypto';

export interface Page<D = unknown> {
  data: D;
  etag: string;
  /** `{"success":true,"data":<data>,"error":null,"timestamp":"` as bytes. */
  head: Buffer;
}

export const etagOf = (bytes: string | Buffer): string => `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;

/** True when an If-None-Match header names this ETag (or is *); a weak form matches too (RFC 9110 13.1.2). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v === etag || v === `W/${etag}`;
  });
}

export function buildPage<D>(data: D): Page<D> {
  const json = JSON.stringify(data);
  return { data, etag: etagOf(json), head: Buffer.from(`{"success":true,"data":${json},"error":null,"timestamp":"`) };
}

// The last page built from equal JSON is reused, so a document whose data did not change keeps
// its bytes and ETag without hashing again.
const recent = new Map<string, Page>();

/** A page for data whose JSON is usually unchanged (documents): memoized on the JSON text. */
export function pageOf(data: unknown): Page {
  const json = JSON.stringify(data);
  const hit = recent.get(json);
  if (hit) return hit;
  if (recent.size >= 64) recent.clear();
  const page = { data, etag: etagOf(json), head: Buffer.from(`{"success":true,"data":${json},"error":null,"timestamp":"`) };
  recent.set(json, page);
  return page;
}

// The timestamp's bytes change once per millisecond; under load many answers share them. They are
// rewritten in place (a Buffer.from per millisecond took a slice of node's pool, and a new 8 KB
// pool every few hundred milliseconds, a malloc large enough that glibc gathers its free small
// blocks first); `tailMs` says which millisecond they spell.
let tailMs = -1;
let tail = Buffer.alloc(0);

/** `<now as ISO 8601>"}`, the envelope's end, rewritten once per millisecond (read `tailMs`). */
function tailNow(ms: number): Buffer {
  if (ms !== tailMs) {
    tailMs = ms;
    const text = `${new Date(ms).toISOString()}"}`;
    if (text.length === tail.length) tail.write(text, 0, 'latin1');
    else tail = Buffer.from(text, 'latin1');
  }
  return tail;
}

// The last body built is reused by the answers of the same page in the same millisecond (never
// mutated, so sharing it is safe), which spares an allocation of the page's size per request.
let lastMs = -1;
let lastPage: Page | null = null;
let lastBody = Buffer.alloc(0);

/** The whole envelope of a page, stamped now. */
export function pageBody(page: Page): Buffer {
  const t = tailNow(Date.now());
  if (page !== lastPage || tailMs !== lastMs) {
    lastPage = page;
    lastMs = tailMs;
    lastBody = Buffer.concat([page.head, t], page.head.length + t.length);
  }
  return lastBody;
}

// The lean read path (fast-read.ts) hands a page's bytes to uWS inside the request callback, and
// uWS has copied them before `end` returns (into its cork buffer, the socket, or its own
// backpressure buffer). So one buffer per page serves every such answer: the envelope is copied
// in once and the timestamp rewritten in place when the millisecond changes. No allocation per
// answer or per millisecond (pageBody's 18 KB copy each millisecond, with the answer object built
// around it, cost 2.9-4 us per lean answer under load; BENCHMARKS.md reads). Only for bytes
// written at once: an answer sent later (the general pipeline) takes pageBody's own buffer.
const stamped = new WeakMap<Page, { body: Buffer; ms: number }>();

/** The whole envelope of a page, stamped now, in a buffer reused by the next call: write it at once. */
let lastStampedPage: Page | null = null;
let lastStamped: { body: Buffer; ms: number } | undefined;
export function stampedBody(page: Page): Buffer {
  const t = tailNow(Date.now());
  let s = page === lastStampedPage ? lastStamped : stamped.get(page);
  if (!s || s.body.length !== page.head.length + t.length) {
    s = { body: Buffer.allocUnsafe(page.head.length + t.length), ms: -1 };
    page.head.copy(s.body, 0);
    stamped.set(page, s);
  }
  if (s.ms !== tailMs) {
    s.ms = tailMs;
    t.copy(s.body, page.head.length);
  }
  lastStampedPage = page;
  lastStamped = s;
  return s.body;
}

/** Memoizes the ETag of a raw document per route: recomputed only when the bytes change. */
export class EtagMemo {
  private readonly last = new Map<string, { body: string | Buffer; etag: string }>();

  of(key: string, body: string | Buffer): string {
    const m = this.last.get(key);
    if (m && (typeof body === 'string' ? m.body === body : Buffer.isBuffer(m.body) && m.body.equals(body))) return m.etag;
    const etag = etagOf(body);
    this.last.set(key, { body, etag });
    return etag;
  }
}

/** What a page answers on the general pipeline: 304 and no body when If-None-Match names its ETag,
 * else its bytes stamped now (the lean read, fast-read.ts, decides the same with `etagMatches` and
 * `stampedBody`, without an object per answer). */
function pageStatus(page: Page, ifNoneMatch: string | undefined): { status: 200 | 304; body: Buffer | '' } {
  return etagMatches(ifNoneMatch, page.etag) ? { status: 304, body: '' } : { status: 200, body: pageBody(page) };
}

/** A page's answer for the general pipeline: `pageStatus` with the ETag, revalidated on every use
 * (no-cache), typed JSON when it has a body (the lean path writes the same headers, src/transport/http/uws.ts). */
export function pageAnswer(
  page: Page,
  ifNoneMatch: string | undefined,
  headers: Record<string, string>,
): { status: number; headers: Record<string, string>; body: string | Buffer } {
  headers.etag = page.etag;
  headers['cache-control'] ??= 'no-cache';
  const { status, body } = pageStatus(page, ifNoneMatch);
  if (status === 200) headers['content-type'] = 'application/json; charset=utf-8';
  return { status, headers, body };
}
