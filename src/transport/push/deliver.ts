// Push delivery of each emission to every active subscription: signed, retried with exponential
// backoff (5 tries), a subscription paused after 20 failed deliveries in a row. Nothing here is
// awaited by the scheduler tick: a slow or hanging callback only ever costs its own timeout.
import http from 'node:http';
import https from 'node:https';
import type { Ctx } from '../../domain/ports.js';
import type { SignalEntry } from '../../domain/signal.js';
import * as subs from '../../store/push.js';
import { guardedLookup, isPublicAddress, literalRefused, RefusedAddress } from './address.js';
import { signatureHeaders } from './sign.js';

export const TRIES = 5;
export const PAUSE_AFTER = 20;

export interface PostResult {
  ok: boolean;
  status: string;
}

/** One POST over a connection pinned to a checked address; never throws, always ends by `timeoutMs`. */
export function postJson(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; allowPrivate: boolean; signal?: AbortSignal },
): Promise<PostResult> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve({ ok: false, status: 'bad_url' });
    }
    if (literalRefused(u, opts.allowPrivate)) return resolve({ ok: false, status: 'refused_address' });
    const lib = u.protocol === 'https:' ? https : http;
    let settled = false;
    const done = (r: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = lib.request(u, {
      method: 'POST',
      agent: false,
      ...(opts.signal ? { signal: opts.signal } : {}),
      lookup: guardedLookup(opts.allowPrivate) as never,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'commons-signal/1',
        ...headers,
      },
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, status: 'timeout' });
    }, opts.timeoutMs);
    req.on('socket', (sock) => {
      // The address actually connected to is checked as well, not only what DNS said.
      sock.once('connect', () => {
        if (!opts.allowPrivate && !isPublicAddress(sock.remoteAddress)) {
          req.destroy(new RefusedAddress(`connected to refused address ${sock.remoteAddress}`));
        }
      });
    });
    req.on('error', (err) =>
      done({
        ok: false,
        status: err instanceof RefusedAddress ? 'refused_address' : `error:${(err as NodeJS.ErrnoException).code ?? err.message}`,
      }),
    );
    req.on('response', (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      done({ ok: code >= 200 && code < 300, status: String(code) });
    });
    req.end(body);
  });
}

export interface DelivererOptions {
  /** First retry delay; each next one doubles. */
  backoffBaseMs: number;
  timeoutMs: number;
}

export class PushDeliverer {
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private readonly abort = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly ctx: Ctx,
    private readonly opts: DelivererOptions,
  ) {}

  /** Starts the delivery of one emission to every active subscription and returns at once. */
  dispatch(entry: SignalEntry): void {
    this.track(
      subs.activeSubscriptions(this.ctx.sql).then((list) => {
        const body = JSON.stringify({ type: 'signal.emitted', timestamp: entry.emitted_at, data: entry });
        for (const sub of list) this.track(this.deliver(sub, entry.id, body));
      }),
    );
  }

  /** Resolves when every delivery started so far has finished (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    for (const [t, wake] of this.timers) {
      clearTimeout(t);
      wake();
    }
    this.timers.clear();
    await this.idle();
  }

  private track(p: Promise<void>): void {
    const q = p.catch((err: unknown) => this.ctx.log.warn({ err }, 'push delivery failed'));
    this.running.add(q);
    void q.finally(() => this.running.delete(q));
  }

  private async deliver(sub: subs.SubscriptionRow, id: string, body: string): Promise<void> {
    let last: PostResult = { ok: false, status: 'not_sent' };
    for (let attempt = 1; attempt <= TRIES && !this.stopped; attempt++) {
      if (attempt > 1) await this.sleep(this.opts.backoffBaseMs * 2 ** (attempt - 2));
      if (this.stopped) return;
      const ts = Math.floor(this.ctx.clock.now().getTime() / 1000);
      last = await postJson(sub.callback_url, signatureHeaders(sub.secret, id, ts, body), body, {
        timeoutMs: this.opts.timeoutMs,
        allowPrivate: this.ctx.config.allowPrivateCallbacks,
        signal: this.abort.signal,
      });
      if (last.ok) {
        await subs.recordSuccess(this.ctx.sql, sub.id, this.ctx.clock.now(), last.status);
        return;
      }
    }
    if (this.stopped) return;
    const { paused } = await subs.recordFailure(this.ctx.sql, sub.id, this.ctx.clock.now(), last.status, PAUSE_AFTER);
    if (paused) this.ctx.log.warn({ subscription: sub.id }, `push subscription paused after ${PAUSE_AFTER} failed deliveries`);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((ok) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        ok();
      }, ms);
      this.timers.set(t, ok);
    });
  }
}
