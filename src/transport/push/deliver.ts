// Push delivery of each emission to every active subscription: signed, retried with exponential
// backoff (5 tries) from a durable outbox, a subscription paused after 20 failed deliveries in a
// row. Nothing here is awaited by the scheduler tick: a slow or hanging callback only ever costs
// its own timeout. The outbox runner (src/actors/outbox-runner.ts) claims the rows and retries.
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

/**
 * One try of one push outbox row (sql/013_push_outbox.sql; DECISIONS.md "Reliability promises"),
 * run by the push deliverer (src/actors/deliverers.ts): an emission becomes one row per active
 * subscription, each try is counted in its row and the next is due after the backoff, so a node
 * killed between tries loses none. Resolves to when the runner should look again.
 */
export function pushAttempt(ctx: Ctx, opts: DelivererOptions) {
  return async (row: outbox.OutboxRow, signal: AbortSignal): Promise<number | null> => {
    const ts = Math.floor(ctx.clock.now().getTime() / 1000);
    const last = await postJson(row.callback_url, signatureHeaders(row.secret, row.emission_id, ts, row.body), row.body, {
      timeoutMs: opts.timeoutMs,
      allowPrivate: ctx.config.allowPrivateCallbacks,
      signal,
    });
    // Stopping: the row stays, and the next run (this node's or another's) tries it again.
    if (signal.aborted && !last.ok) return null;
    if (last.ok) {
      // Recorded before the row goes: a node killed in between delivers again (at least once;
      // receivers dedupe by webhook-id), never loses the delivery.
      await subs.recordDeliverySuccess(ctx, row.subscription_id, last.status);
      await outbox.done(ctx, row.subscription_id, row.emission_id);
      return null;
    }
    if (row.attempts >= TRIES) {
      const { paused } = await subs.recordDeliveryFailure(ctx, row.subscription_id, last.status, PAUSE_AFTER);
      await outbox.done(ctx, row.subscription_id, row.emission_id);
      if (paused) ctx.log.warn({ subscription: row.subscription_id }, `push subscription paused after ${PAUSE_AFTER} failed deliveries`);
      return null;
    }
    const wait = opts.backoffBaseMs * 2 ** (row.attempts - 1);
    await outbox.retryAfter(ctx, row.subscription_id, row.emission_id, wait);
    return wait;
  };
}
