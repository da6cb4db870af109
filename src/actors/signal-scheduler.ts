// The signal scheduler (spec 6.1; DESIGN.md "Actors"): a tick every SIGNAL_INTERVAL_S, aligned to
// the interval so that every node ticks at the same moments. The node holding the leader lock
// emits; emission and push delivery share the tick, but deliveries, IndexNow and Nostr relays
// run after it, never awaited by it (a hanging callback or relay never delays the next tick).
import { countDbError } from '../domain/metrics.js';
import { type NostrKey, serviceNostrKey } from '../domain/nostr.js';
import type { Ctx } from '../domain/ports.js';
import { type Emission, emitSignal, SIGNAL_PAGE_PATH } from '../domain/signal.js';
import { type LeaderLock, leaderLock } from '../store/leader.js';
import { NostrPublisher } from '../transport/nostr/publisher.js';
import { pingIndexNow } from '../transport/push/indexnow.js';
import { pushDeliverer } from './deliverers.js';
import type { Actor, RunningActors } from './index.js';

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
export function schedulerOf(app: { actors: RunningActors }): SignalScheduler {
  if (!app.actors.signal) throw new Error('no signal scheduler is running for this app');
  return app.actors.signal;
}

export class SignalScheduler implements Actor {
  readonly name = 'signal-scheduler';
  readonly push: ReturnType<typeof pushDeliverer>;
  readonly nostr: NostrPublisher;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private ticking: Promise<TickResult> | null = null;

  constructor(
    private readonly ctx: Ctx,
    private readonly lock: LeaderLock,
    private readonly key: NostrKey,
  ) {
    const t = timings(ctx.config.signalIntervalS);
    this.push = pushDeliverer(ctx, t);
    this.nostr = new NostrPublisher(ctx, t);
  }

  get pubkey(): string {
    return this.key.pubkey;
  }

  leaderPid(): Promise<number | null> {
    return this.lock.pid();
  }

  start(): void {
    this.push.start();
    void this.tick().catch(() => {});
    this.schedule();
  }

  /** One tick: take or keep the lock, emit when leading, hand the emission to the deliverers. */
  tick(): Promise<TickResult> {
    // Ticks never overlap on one node; a tick that finds one running shares its result.
    this.ticking ??= this.run().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  /** Waits for deliveries started so far (tests). */
  async idle(): Promise<void> {
    await Promise.all([this.push.idle(), this.nostr.idle()]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking?.catch(() => {});
    await Promise.all([this.push.stop(), this.nostr.stop()]);
    await this.lock.close();
  }

  private async run(): Promise<TickResult> {
    if (this.stopped) return { role: 'follower', emission: null };
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

  /** Real timers, aligned to multiples of the interval (wall time), so nodes tick together. */
  private schedule(): void {
    if (this.stopped) return;
    const ms = this.ctx.config.signalIntervalS * 1000;
    const wait = ms - (Date.now() % ms) + 5;
    this.timer = setTimeout(() => {
      void this.tick().catch((err: unknown) => this.ctx.log.error({ err }, 'signal tick failed'));
      this.schedule();
    }, wait);
    this.timer.unref();
  }
}

export async function startSignalScheduler(ctx: Ctx): Promise<SignalScheduler> {
  const key = await serviceNostrKey(ctx);
  const s = new SignalScheduler(ctx, leaderLock(ctx.config, 'signal-scheduler'), key);
  s.start();
  return s;
}
