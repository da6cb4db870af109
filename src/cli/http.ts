// The command line's HTTP client: one call per operation of the route table, the envelope read
// back, refusals thrown as Refused (exit 1), a service that cannot be reached as Unreachable
// (exit 3). A 503 or 429 (and 409 IDEMPOTENCY_IN_FLIGHT) is retried after its Retry-After, and
// every write carries an Idempotency-Key kept across its retries, so a retried write is done once
// (DECISIONS.md "Idempotent writes").
import { randomUUID } from 'node:crypto';
import { Refused, Unreachable } from './errors.js';
import type { Envelope, WireError } from './wire.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface CallOpts {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  /** Which credential to send: the member token (default when one is known), the operator's, or none. */
  as?: 'member' | 'operator' | 'none';
  /** A document served without the envelope (/readyz): returned as parsed, whatever the status. */
  raw?: boolean;
  /** false: answer at once, without waiting out a 503 (readiness is reported as it is). */
  retry?: boolean;
}

export interface Answer<D> {
  status: number;
  /** The answer's JSON as received: the envelope, or the raw document. */
  body: unknown;
  data: D;
  headers: Headers;
}

export interface ClientOpts {
  server: string;
  token?: string | undefined;
  operatorToken?: string | undefined;
  maxWaitS: number;
  /** Where retries are announced (stderr). */
  note: (line: string) => void;
}

const ATTEMPTS = 5;
const TIMEOUT_MS = 30_000;

/** Seconds to wait from Retry-After (seconds or an HTTP date), else the envelope's retry_after_s. */
export function retryAfterS(headers: Headers, error: WireError | undefined, fallback: number): number {
  const h = headers.get('retry-after');
  if (h !== null) {
    if (/^\d+$/.test(h.trim())) return Number(h);
    const at = Date.parse(h);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  return error?.retry_after_s ?? fallback;
}

const retryable = (status: number, error: WireError | undefined): boolean =>
  status === 503 || status === 429 || (status === 409 && error?.code === 'IDEMPOTENCY_IN_FLIGHT');

export class Client {
  constructor(readonly opts: ClientOpts) {}

  get server(): string {
    return this.opts.server;
  }

  get token(): string | undefined {
    return this.opts.token;
  }

  url(path: string, query: CallOpts['query'] = {}): string {
    const u = new URL(path, `${this.opts.server.replace(/\/+$/, '')}/`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  private headers(method: Method, o: CallOpts, key: string | undefined): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', 'user-agent': 'commons-cli' };
    const as = o.as ?? 'member';
    if (as === 'member' && this.opts.token) h.authorization = `Bearer ${this.opts.token}`;
    if (as === 'operator' && this.opts.operatorToken) h.authorization = `Bearer ${this.opts.operatorToken}`;
    if (o.body !== undefined) h['content-type'] = 'application/json';
    if (key && method !== 'GET') h['idempotency-key'] = key;
    return h;
  }

  async call<D>(method: Method, path: string, o: CallOpts = {}): Promise<Answer<D>> {
    // One key per write, kept across its retries: the service does the write once.
    const key = method === 'GET' ? undefined : randomUUID();
    const url = this.url(path, o.query);
    const init = { method, headers: this.headers(method, o, key), body: o.body === undefined ? undefined : JSON.stringify(o.body) };
    let backoff = 1;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      let text: string;
      try {
        res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
        text = await res.text();
      } catch (e) {
        const why = (e as { cause?: { code?: string; message?: string } }).cause;
        throw new Unreachable(`cannot reach ${this.opts.server}: ${why?.code ?? why?.message ?? (e as Error).message}`);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const env = body as Envelope<D> | undefined;
      const error = env && typeof env === 'object' && env.error ? env.error : undefined;
      if (o.retry !== false && retryable(res.status, error) && attempt < ATTEMPTS) {
        const wait = retryAfterS(res.headers, error, backoff);
        backoff *= 2;
        if (wait <= this.opts.maxWaitS) {
          this.opts.note(
            `${method} ${path}: ${res.status} ${error?.code ?? ''}; retrying in ${wait} s (attempt ${attempt + 1} of ${ATTEMPTS}${key ? `, Idempotency-Key ${key}` : ''})`,
          );
          await new Promise((ok) => setTimeout(ok, wait * 1000));
          continue;
        }
      }
      if (o.raw) {
        if (body === undefined) throw new Unreachable(`${method} ${path} answered ${res.status} without JSON`);
        return { status: res.status, body, data: body as D, headers: res.headers };
      }
      if (res.status === 503) throw new Unreachable(`${method} ${path}: 503 ${error?.code ?? ''} ${error?.message ?? ''}`.trim(), body);
      if (!env || typeof env !== 'object' || typeof env.success !== 'boolean') {
        throw new Unreachable(
          `${method} ${path} answered ${res.status} without the JSON envelope: is ${this.opts.server} a Commons service?`,
        );
      }
      if (!env.success) throw new Refused(res.status, error as WireError, body);
      return { status: res.status, body, data: env.data as D, headers: res.headers };
    }
  }
}
