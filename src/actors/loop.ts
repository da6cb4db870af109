// The one loop of the node's timed actors (DESIGN.md "Actors"; docs/architecture.md "Actors"):
// the task deadlines, the deposit verifier, the signal scheduler, the outbox deliverers and the
// Idempotency-Key reaper each give it one pass and when the next is due, and it does the rest the
// same way for all of them: one pass at a time, a pass when woken (the passes asked for while one
// runs share the one after it), a timer set after each pass, and a stop that waits for the pass
// under way. Times of day come from the context's clock (`next` is given `ctx.clock.now()`);
// the timer itself waits real milliseconds.
import type { Ctx } from '../domain/ports.js';

/** A running part of the node that its starter stops (src/actors/index.ts). */
export interface Actor {
  readonly name: string;
  stop(): Promise<void>;
}

export interface LoopOptions<R> {
  /** Names the loop in logs. */
  name: string;
  /** One pass; `signal` aborts when the loop stops (a pass ends early, leaving the rest for later). */
  pass(signal: AbortSignal): Promise<R>;
  /** How long after a pass the next one runs (ms), given its result (undefined when it failed) and
   * the clock's now; null: only when woken. Never consulted while another pass is already asked for. */
  next(result: R | undefined, now: Date): number | null;
  /** When the first pass runs after `start`: 0 at once (the default), after that many ms, or null
   * (only when woken or asked). */
  first?: number | null;
}

const noop = (): void => {};

export class ActorLoop<R> {
  private readonly abort = new AbortController();
  private running: Promise<R> | null = null;
  private queued: Promise<R> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** When the timer fires, on a monotonic scale (performance.now()), to keep the earliest one. */
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly ctx: Ctx,
    private readonly opts: LoopOptions<R>,
  ) {}

  get name(): string {
    return this.opts.name;
  }

  /** Aborted when the loop stops. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /** Runs the first pass (now, later or when woken, by `first`); returns the loop. */
  start(): this {
    const first = this.opts.first === undefined ? 0 : this.opts.first;
    if (first === 0) this.wake();
    else if (first !== null) this.wakeIn(first);
    return this;
  }

  /** A pass begun after this call, and its result: the one queued behind the pass under way (every
   * call meanwhile shares it), or a new one at once. Rejects once the loop is stopped. */
  run(): Promise<R> {
    if (this.stopped) return Promise.reject(new Error(`${this.opts.name} is stopped`));
    if (this.queued) return this.queued;
    if (!this.running) return this.begin();
    const queued = this.running.then(noop, noop).then(() => {
      this.queued = null;
      return this.begin();
    });
    this.queued = queued;
    return queued;
  }

  /** The pass under way, or a new one: for callers that only need a pass recent enough. */
  join(): Promise<R> {
    return this.running ?? this.run();
  }

  /** Asks for a pass (as `run`) without waiting for it; a failure is logged and the next pass retries. */
  wake(): void {
    if (this.stopped) return;
    this.run().catch((err: unknown) => {
      if (!this.stopped) this.ctx.log.warn({ err }, `${this.opts.name}: pass failed; the next one retries`);
    });
  }

  /** A pass in `ms` at the latest (an earlier timer already set is kept). */
  wakeIn(ms: number): void {
    if (this.stopped) return;
    const wait = Math.max(0, ms);
    const at = performance.now() + wait;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.wake();
    }, wait);
    this.timer.unref();
  }

  /** True while a pass runs or is asked for. */
  get busy(): boolean {
    return this.running !== null || this.queued !== null;
  }

  /** Resolves when no pass runs nor is asked for. */
  async settled(): Promise<void> {
    while (this.queued || this.running) await (this.queued ?? this.running)?.then(noop, noop);
  }

  /** No pass starts after this; resolves once the pass under way (told by `signal`) has ended. */
  async stop(): Promise<void> {
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.settled();
  }

  private begin(): Promise<R> {
    if (this.stopped) return Promise.reject(new Error(`${this.opts.name} is stopped`));
    const p = Promise.resolve().then(() => this.opts.pass(this.abort.signal));
    this.running = p;
    p.then(
      (r) => this.after(p, r),
      () => this.after(p, undefined),
    );
    return p;
  }

  private after(p: Promise<R>, result: R | undefined): void {
    if (this.running === p) this.running = null;
    // A pass already asked for runs now, and sets the timer after it.
    if (this.stopped || this.queued) return;
    const ms = this.opts.next(result, this.ctx.clock.now());
    if (ms !== null) this.wakeIn(ms);
  }
}
