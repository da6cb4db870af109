// Delivers inbox items to members' webhooks (DECISIONS.md "Inbox"), signed exactly like push
// (Standard Webhooks headers, webhook-id `inbox-<number>-<id>`), from the durable outbox that
// inbox_add fills in each item's own transaction: a node killed between tries loses nothing, any
// node drains due rows (leased while posted), and each member's items go out one at a time in id
// order. A try that fails waits base x 2^(tries-1) (capped); an item is given up after 24 h; 50
// failed tries in a row disable the webhook, which writes a `webhook_disabled` item.
import { INBOX_TOPIC } from '../../domain/inbox.js';
import * as hook from '../../domain/inbox-webhook.js';
import type { Ctx } from '../../domain/ports.js';
import { postJson } from './deliver.js';
import { signatureHeaders } from './sign.js';

/** Due heads claimed per pass. */
const CLAIM = 50;
/** A pass at least this often: items written by the database alone (a badge reached, from a
 * trigger) or whose bus message was lost are not announced, and still go out. */
const POLL_MS = 5000;

export class InboxDeliverer {
  readonly name = 'inbox-deliverer';
  private readonly abort = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private draining: Promise<void> | null = null;
  private again = false;
  private readonly unsubscribe: () => void;
  private readonly poll: NodeJS.Timeout;

  constructor(private readonly ctx: Ctx) {
    // Every node hears of every item (the bus), and whichever claims the row first delivers it.
    this.unsubscribe = ctx.bus.subscribe(INBOX_TOPIC, () => this.kick());
    this.poll = setInterval(() => this.kick(), POLL_MS);
    this.poll.unref();
  }

  /** Resumes what a previous run left in the outbox. */
  start(): this {
    this.kick();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    clearInterval(this.poll);
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.draining;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private get opts() {
    return this.ctx.config.inboxWebhook;
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((err: unknown) => this.ctx.log.warn({ err }, 'inbox outbox pass failed; retried'))
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
      const rows = await hook.claimDue(this.ctx, CLAIM, this.opts.timeoutMs + 1000);
      for (const row of rows) this.track(this.attempt(row));
      if (rows.length < CLAIM) return;
    }
  }

  private track(p: Promise<void>): void {
    const q = p.catch((err: unknown) => this.ctx.log.warn({ err }, 'inbox delivery failed'));
    this.running.add(q);
    void q.finally(() => this.running.delete(q));
  }

  private async wakeForNext(): Promise<void> {
    const p = await hook.pending(this.ctx).catch(() => ({ n: 1, dueInMs: this.opts.backoffBaseMs }));
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

  private async attempt(row: hook.DueRow): Promise<void> {
    // Wall-clock time: receivers check the signature's timestamp against their own clock.
    const ts = Math.floor(Date.now() / 1000);
    const id = hook.deliveryId(row.identity_id, row.item_id);
    const res = await postJson(row.callback_url, signatureHeaders(row.secret, id, ts, row.body), row.body, {
      timeoutMs: this.opts.timeoutMs,
      allowPrivate: this.ctx.config.allowPrivateCallbacks,
      signal: this.abort.signal,
    });
    // Stopping: the row stays leased, and the next run (this node's or another's) tries again.
    if (this.stopped && !res.ok) return;
    if (res.ok) {
      await hook.delivered(this.ctx, row.identity_id, row.item_id, res.status);
      // The member's next item is due now.
      this.kick();
      return;
    }
    const failures = await hook.recordFailure(this.ctx, row.identity_id, res.status);
    if (failures !== null && failures >= hook.DISABLE_AFTER) {
      this.ctx.log.warn({ member: row.identity_id }, `inbox webhook disabled after ${hook.DISABLE_AFTER} failed tries`);
      await hook.disable(this.ctx, row.identity_id);
      return;
    }
    if (Date.now() - new Date(row.first_at).getTime() >= hook.RETRY_FOR_MS) {
      await hook.dropItem(this.ctx, row.identity_id, row.item_id);
      this.kick();
      return;
    }
    const wait = Math.min(this.opts.backoffMaxMs, this.opts.backoffBaseMs * 2 ** Math.min(30, row.attempts - 1));
    await hook.retryAfter(this.ctx, row.identity_id, row.item_id, wait);
    this.wakeIn(wait);
  }
}
