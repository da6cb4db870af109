// The one runner of a durable outbox (DESIGN.md "Effects leave through a durable outbox"): claims
// due rows with a lease, tries each, wakes at the next due time, and stops leaving what is left to
// the next run. Each outbox gives only its SQL (claim, pending) and its attempt, which settles the
// row itself (done, retry after a backoff, given up) and says when to look again. The lease is a
// due time pushed past the try's timeout, so a node killed mid-try loses nothing: its rows fall
// due again and any node, this one restarted or another, claims them.
import type { Ctx } from '../domain/ports.js';
import { type Actor, ActorLoop } from './loop.js';

/** Rows not yet delivered nor given up, and the earliest due time among them (ms from now). */
export interface Pending {
  n: number;
  dueInMs: number | null;
}

export interface OutboxJob<Row> {
  /** Names the outbox in logs ("push", "inbox"). */
  name: string;
  /** Claims up to `limit` due rows for `leaseMs` (another node skips them meanwhile), counting the try. */
  claim(limit: number, leaseMs: number): Promise<Row[]>;
  pending(): Promise<Pending>;
  /** One try of a claimed row, aborted by `signal` when the runner stops. Resolves to when to look
   * again: 0 at once (another row is due now), after that many ms (the row's backoff), or null. */
  attempt(row: Row, signal: AbortSignal): Promise<number | null>;
}

export interface RunnerOptions {
  /** One try's timeout; a claimed row is leased for it and a margin. */
  timeoutMs: number;
  /** When the outbox cannot be read, the next look is this far off. */
  backoffBaseMs: number;
  /** Also a pass whenever this bus topic announces rows, and at least every `pollMs` (rows written
   * by the database alone, or whose message was lost, are not announced and still go out). */
  wakeOn?: { topic: string; pollMs: number };
}

/** Due rows claimed per pass. */
const CLAIM = 50;

export class OutboxRunner<Row> implements Actor {
  readonly name: string;
  private readonly loop: ActorLoop<number | null>;
  private readonly running = new Set<Promise<void>>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly ctx: Ctx,
    private readonly job: OutboxJob<Row>,
    private readonly opts: RunnerOptions,
  ) {
    this.name = `${job.name}-deliverer`;
    const poll = opts.wakeOn?.pollMs ?? null;
    this.loop = new ActorLoop<number | null>(ctx, {
      name: `${job.name} outbox`,
      pass: (signal) => this.drain(signal),
      // The earliest row's due time (a try that fails also wakes it after its backoff), and at
      // least every pollMs when the outbox polls.
      next: (dueInMs) => {
        const due = dueInMs === undefined ? opts.backoffBaseMs : dueInMs;
        if (due === null) return poll;
        return poll === null ? due : Math.min(due, poll);
      },
    });
  }

  /** Resumes what a previous run left in the outbox, and listens for new rows. */
  start(): this {
    const { wakeOn } = this.opts;
    // Every node hears of every row (the bus), and whichever claims the row first delivers it.
    if (wakeOn) this.unsubscribe = this.ctx.bus.subscribe(wakeOn.topic, () => this.kick());
    this.loop.start();
    return this;
  }

  /** A pass now (rows were written, or a previous run left some); one pass at a time. */
  kick(): void {
    this.loop.wake();
  }

  /** Resolves when the outbox holds nothing more to try (tests and shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      while (this.running.size > 0) await Promise.allSettled([...this.running]);
      if (this.loop.busy) {
        await this.loop.settled();
        continue;
      }
      const p = await this.job.pending();
      if (p.n === 0 || this.loop.stopped) return;
      await new Promise((ok) => setTimeout(ok, Math.max(5, Math.min(p.dueInMs ?? 10, 50))));
      this.kick();
    }
  }

  /** Aborts the tries under way: a try that fails for it leaves its row for the next run. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.loop.stop();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Claims and starts the due rows (their tries run on), then says when the earliest row is due. */
  private async drain(signal: AbortSignal): Promise<number | null> {
    while (!signal.aborted) {
      const rows = await this.job.claim(CLAIM, this.opts.timeoutMs + 1000);
      for (const row of rows) this.track(this.attempt(row, signal));
      if (rows.length < CLAIM) break;
    }
    const base = this.opts.backoffBaseMs;
    const p = await this.job.pending().catch(() => ({ n: 1, dueInMs: base }));
    return p.n > 0 ? Math.max(0, p.dueInMs ?? base) : null;
  }

  private async attempt(row: Row, signal: AbortSignal): Promise<void> {
    const next = await this.job.attempt(row, signal);
    if (next === 0) this.kick();
    else if (next !== null) this.loop.wakeIn(next);
  }

  private track(p: Promise<void>): void {
    const q = p.catch((err: unknown) => this.ctx.log.warn({ err }, `${this.job.name} delivery failed`));
    this.running.add(q);
    void q.finally(() => this.running.delete(q));
  }
}
