// The signal scheduler (spec 6.1; DESIGN.md "Actors"): a tick every SIGNAL_INTERVAL_S, aligned to
// the interval so that every node ticks at the same moments. The node holding the leader lock
// emits and wakes the push deliverer (its own actor, started before this one, src/actors/index.ts);
// deliveries, IndexNow and Nostr relays run after the tick, never awaited by it (a hanging
// callback or relay never delays the next tick).
import { countDbError } from '../domain/metrics.js';
import { type NostrKey, serviceNostrKey } from '../domain/nostr.js';
import type { Ctx } from '../domain/ports.js';
import { type Emission, emitSignal, SIGNAL_PAGE_PATH } from '../domain/signal.js';
import { type LeaderLock, leaderLock } from '../store/leader.js';
import { NostrPublisher } from '../transport/nostr/publisher.js';
import { pingIndexNow } from '../transport/push/indexnow.js';
import { type Actor, ActorLoop } from './loop.js';

export interface TickResult {
  role: 'leader' | 'follower';
  emission: Emission | null;
}

/** Timings scale with the interval so retries of one emission end well before the next one. */
export function timings(intervalS: number) {
  const ms = intervalS * 1000;
  return {
    // 5 tries: the waits sum to 15 x base = a quarter of the interval (about 28 s at 111 s).
    backoffBaseMs: Math.max(5, Math.min(2000, ms / 60)),
    timeoutMs: Math.max(100, Math.min(5000, ms / 4)),
  };
}

/** The scheduler an app runs (tests call its `tick()` directly). */
export function schedulerOf(app: { actors: { signal: SignalScheduler | null } }): SignalScheduler {
  if (!app.actors.signal) throw new Error('no signal scheduler is running for this app');
  return app.actors.signal;
}

/** What the scheduler wakes when an emission's transaction has written push rows. */
export interface PushOutbox {
  kick(): void;
  idle(): Promise<void>;
}

export class SignalScheduler implements Actor {
  readonly name = 'signal-scheduler';
  readonly nostr: NostrPublisher;
  private readonly loop: ActorLoop<TickResult>;

  constructor(
    private readonly ctx: Ctx,
    private readonly lock: LeaderLock,
    private readonly key: NostrKey,
    readonly push: PushOutbox,
  ) {
    this.nostr = new NostrPublisher(ctx, timings(ctx.config.signalIntervalS));
    const ms = ctx.config.signalIntervalS * 1000;
    this.loop = new ActorLoop<TickResult>(ctx, {
      name: 'signal tick',
      pass: () => this.run(),
      // Aligned to multiples of the interval (the clock's time), so nodes tick together.
      next: (_r, now) => ms - (now.getTime() % ms) + 5,
    });
  }

  get pubkey(): string {
    return this.key.pubkey;
  }

  leaderPid(): Promise<number | null> {
    return this.lock.pid();
  }

  start(): this {
    this.loop.start();
    return this;
  }

  /** One tick: take or keep the lock, emit when leading, hand the emission to the deliverers.
   * Ticks never overlap on one node; a tick that finds one running shares its result. */
  tick(): Promise<TickResult> {
    return this.loop.join();
  }

  /** Waits for deliveries started so far (tests). */
  async idle(): Promise<void> {
    await Promise.all([this.push.idle(), this.nostr.idle()]);
  }

  /** Stops ticking and the Nostr publisher it owns; the push deliverer is stopped by its starter. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.nostr.stop();
    await this.lock.close();
  }

  private async run(): Promise<TickResult> {
    this.ctx.metrics.schedulerTicks.inc({ scheduler: 'signal' });
    try {
      return await this.lead();
    } catch (err) {
      countDbError(this.ctx.metrics, err);
      throw err;
    }
  }

  private async lead(): Promise<TickResult> {
    if (!(await this.lock.acquire())) return { role: 'follower', emission: null };
    const emission = await emitSignal(this.ctx, this.key);
    if (emission) {
      // Its outbox rows were written in the emission's own transaction (src/domain/signal.ts).
      this.push.kick();
      this.nostr.publish(emission.events);
      const base = this.ctx.publicUrl();
      const urls = [
        `${base}${SIGNAL_PAGE_PATH}`,
        `${base}${SIGNAL_PAGE_PATH}/${emission.entry.id}`,
        `${base}/signal.json`,
        `${base}/feed.xml`,
      ];
      void pingIndexNow(this.ctx, urls, timings(this.ctx.config.signalIntervalS).timeoutMs);
    }
    return { role: 'leader', emission };
  }
}

export async function startSignalScheduler(ctx: Ctx, push: PushOutbox): Promise<SignalScheduler> {
  const key = await serviceNostrKey(ctx);
  return new SignalScheduler(ctx, leaderLock(ctx.config, 'signal-scheduler'), key, push).start();
}
