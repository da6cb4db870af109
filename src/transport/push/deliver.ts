// Push delivery of each emission to every active subscription: signed, retried with exponential
// backoff (5 tries) from a durable outbox, a subscription paused after 20 failed deliveries in a
// row. Nothing here is awaited by the scheduler tick: a slow or hanging callback only ever costs
// its own timeout.
import http from 'node:http';
import https from 'node:https';
import type { Ctx } from '../../domain/ports.js';
import * as subs from '../../domain/push.js';
import * as outbox from '../../domain/push-outbox.js';
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

/** Due rows claimed per pass; each is leased for its POST's timeout and a margin. */
const CLAIM = 50;

/**
 * Delivers through the durable outbox (sql/013_push_outbox.sql; DECISIONS.md "Reliability
 * promises"): an emission becomes one row per active subscription, each try is counted in its row
 * and the next is due after the backoff, so a node killed between tries loses none; every node
 * drains due rows (leased while posted), and a restarted node resumes what is left.
 */
export class PushDeliverer {
  private readonly abort = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private draining: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly ctx: Ctx,
    private readonly opts: DelivererOptions,
  ) {}

  /** Resumes deliveries a previous run left in the outbox. */
  start(): void {
    this.kick();
  }

  /** Starts delivering an emission whose outbox rows its own transaction wrote (src/domain/signal.ts). */
  dispatch(): void {
    this.kick();
  }

  /** Resolves when the outbox holds nothing more to try (tests and shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      while (this.running.size > 0) await Promise.allSettled([...this.running]);
      if (this.draining) {
        await this.draining;
        continue;
      }
      const p = await outbox.pending(this.ctx);
      if (p.n === 0 || this.stopped) return;
      await new Promise((ok) => setTimeout(ok, Math.max(5, Math.min(p.dueInMs ?? 10, 50))));
      this.kick();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.draining;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private track(p: Promise<void>): void {
    const q = p.catch((err: unknown) => this.ctx.log.warn({ err }, 'push delivery failed'));
    this.running.add(q);
    void q.finally(() => this.running.delete(q));
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((err: unknown) => this.ctx.log.warn({ err }, 'push outbox pass failed; retried'))
      .finally(() => {
        this.draining = null;
        if (this.again) {
          this.again = false;
          this.kick();
        } else void this.wakeForNext();
      });
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const rows = await outbox.claimDue(this.ctx, CLAIM, this.opts.timeoutMs + 1000);
      for (const row of rows) this.track(this.attempt(row));
      if (rows.length < CLAIM) return;
    }
  }

  /** Sleeps until the earliest row is due (a try that fails also wakes it after its backoff). */
  private async wakeForNext(): Promise<void> {
    const p = await outbox.pending(this.ctx).catch(() => ({ n: 1, dueInMs: this.opts.backoffBaseMs }));
    if (p.n > 0) this.wakeIn(Math.max(0, p.dueInMs ?? this.opts.backoffBaseMs));
  }

  private wakeIn(ms: number): void {
    if (this.stopped) return;
    const at = Date.now() + ms;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.kick();
    }, ms);
    this.timer.unref();
  }

  private async attempt(row: outbox.OutboxRow): Promise<void> {
    const ts = Math.floor(this.ctx.clock.now().getTime() / 1000);
    const last = await postJson(row.callback_url, signatureHeaders(row.secret, row.emission_id, ts, row.body), row.body, {
      timeoutMs: this.opts.timeoutMs,
      allowPrivate: this.ctx.config.allowPrivateCallbacks,
      signal: this.abort.signal,
    });
    // Stopping: the row stays, and the next run (this node's or another's) tries it again.
    if (this.stopped && !last.ok) return;
    if (last.ok) {
      // Recorded before the row goes: a node killed in between delivers again (at least once;
      // receivers dedupe by webhook-id), never loses the delivery.
      await subs.recordDeliverySuccess(this.ctx, row.subscription_id, last.status);
      await outbox.done(this.ctx, row.subscription_id, row.emission_id);
      return;
    }
    if (row.attempts >= TRIES) {
      const { paused } = await subs.recordDeliveryFailure(this.ctx, row.subscription_id, last.status, PAUSE_AFTER);
      await outbox.done(this.ctx, row.subscription_id, row.emission_id);
      if (paused)
        this.ctx.log.warn({ subscription: row.subscription_id }, `push subscription paused after ${PAUSE_AFTER} failed deliveries`);
      return;
    }
    const wait = this.opts.backoffBaseMs * 2 ** (row.attempts - 1);
    await outbox.retryAfter(this.ctx, row.subscription_id, row.emission_id, wait);
    this.wakeIn(wait);
  }
}
