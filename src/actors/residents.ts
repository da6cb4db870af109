// One actor per resident (DESIGN.md "Shape"): the lean runtime steps each resident through the presence
// machine; one 1-second tick fires due timers and flushes heartbeats to PostgreSQL in one batch
// (coalesced: 10,000 heartbeats a second are not 10,000 transactions). With REDIS_URL the
// sorted set in Redis is the truth every node counts from, and a change is announced only by
// the node whose atomic update made it. Presence is rebuilt from the database at start.
import { randomUUID } from 'node:crypto';
import type { Ctx } from '../domain/ports.js';
import type { HeartbeatOutcome, PresenceService } from '../domain/presence.js';
import { formatMember } from '../domain/tokens.js';
import { ONLINE_WINDOW_MS } from '../machines/presence.js';
import { type BeatBatch, flushHeartbeats, recentHeartbeats } from '../store/habitat.js';
import { type Actor, ActorLoop } from './loop.js';
import { RedisPresence } from './presence-redis.js';
import { PresenceRuntime } from './presence-runtime.js';

export const TICK_MS = 1000;

export class Residents implements PresenceService {
  readonly runtime: PresenceRuntime;
  private readonly shared: RedisPresence | null;
  /** Notes of heartbeats not yet written (the times wait in the runtime's actors). */
  private pendingNote = new Map<number, string>();
  private readonly loop: ActorLoop<void>;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: Ctx) {
    this.runtime = new PresenceRuntime((id, state, at) => this.changed(id, state, at));
    this.shared = ctx.config.redisUrl ? new RedisPresence(ctx.config.redisUrl, ctx.config.redisPrefix) : null;
    // The shared tick, every TICK_MS on the actors' one loop (tests also call tick() directly).
    this.loop = new ActorLoop(ctx, { name: 'residents', pass: () => this.tick(), next: () => TICK_MS, first: TICK_MS });
  }

  async start(): Promise<void> {
    const now = this.ctx.clock.now().getTime();
    for (const r of await recentHeartbeats(this.ctx.sql, new Date(now - ONLINE_WINDOW_MS))) {
      this.runtime.restore(r.id, r.at.getTime(), now);
    }
    this.loop.start();
  }

  heartbeat(id: number, at: Date, note: string | undefined): HeartbeatOutcome | Promise<HeartbeatOutcome> {
    const now = at.getTime();
    const cameOnline = this.runtime.heartbeat(id, now);
    if (note !== undefined) this.pendingNote.set(id, note);
    const until = now + ONLINE_WINDOW_MS;
    // Redis down: this node's actors answer (DECISIONS.md "Reliability promises": a heartbeat never
    // fails for Redis's sake); the sorted set catches up with the resident's next heartbeat.
    if (this.shared?.ready) return this.touchShared(id, until, now, cameOnline);
    if (this.shared && cameOnline) this.announce(id, 'online', now);
    return { cameOnline, onlineUntil: until };
  }

  private async touchShared(id: number, until: number, now: number, cameOnlineHere: boolean): Promise<HeartbeatOutcome> {
    let r: Awaited<ReturnType<RedisPresence['touch']>>;
    try {
      r = await (this.shared as RedisPresence).touch(id, until, now);
    } catch (err) {
      this.ctx.log.warn({ err }, 'presence: redis failed a heartbeat; this node counts it');
      if (cameOnlineHere) this.announce(id, 'online', now);
      return { cameOnline: cameOnlineHere, onlineUntil: until };
    }
    if (r === 'was_expired') this.announce(id, 'offline', now);
    const cameOnline = r !== 'was_online';
    if (cameOnline) this.announce(id, 'online', now);
    return { cameOnline, onlineUntil: until };
  }

  /** From Redis when it answers, else what this node's actors know (a degraded, per-node view). */
  async onlineCount(): Promise<number> {
    if (!this.shared?.ready) return this.runtime.onlineCount;
    return this.shared.count(this.ctx.clock.now().getTime()).catch(() => this.runtime.onlineCount);
  }

  async isOnline(id: number): Promise<boolean> {
    if (!this.shared?.ready) return this.runtime.isOnline(id);
    return this.shared.isOnline(id, this.ctx.clock.now().getTime()).catch(() => this.runtime.isOnline(id));
  }

  creditedDay(id: number): number {
    return this.runtime.creditedDay(id);
  }

  markCredited(id: number, day: number): void {
    this.runtime.markCredited(id, day);
  }

  /** The shared tick: fire due timers, sweep residents of dead nodes, write pending heartbeats. */
  async tick(): Promise<void> {
    const now = this.ctx.clock.now().getTime();
    try {
      this.runtime.tick(now);
      if (this.shared) for (const id of await this.shared.sweep(now)) this.announce(id, 'offline', now);
      await this.flush();
    } catch (err) {
      this.ctx.log.warn({ err }, 'presence tick failed; retried on the next tick');
    }
  }

  /** Writes pending heartbeats after any flush under way. A failed flush rejects only its own
   * callers: the chain goes on from it, so the next tick writes what failed (and what came since). */
  flush(): Promise<void> {
    const next = this.flushing.then(() => this.writePending());
    this.flushing = next.catch(() => {});
    return next;
  }

  private async writePending(): Promise<void> {
    const { ids, ats } = this.runtime.takePending();
    if (ids.length === 0) return;
    const notes = this.pendingNote;
    this.pendingNote = new Map();
    const batch: BeatBatch = { ids, ats, notes: ids.map((id) => notes.get(id) ?? null) };
    try {
      await flushHeartbeats(this.ctx.sql, batch);
    } catch (err) {
      // Keep what failed for the next tick, unless newer heartbeats replaced it.
      batch.ids.forEach((id, i) => {
        this.runtime.restorePending(id, batch.ats[i] as number);
        const note = batch.notes[i];
        if (note != null && !this.pendingNote.has(id)) this.pendingNote.set(id, note);
      });
      throw err;
    }
  }

  /** A local actor changed state. Alone, it announces; with Redis, only a successful ZREM does. */
  private changed(id: number, state: string, at: number): void {
    if (!this.shared) {
      this.announce(id, state, at);
      return;
    }
    if (state !== 'offline') return;
    void this.shared.expire(id, this.ctx.clock.now().getTime()).then(
      (removed) => removed && this.announce(id, 'offline', at),
      (err) => this.ctx.log.warn({ err }, 'presence expire failed; the sweep will retry'),
    );
  }

  private announce(id: number, state: string, at: number): void {
    const data = { registration_number: formatMember(id), state, at: new Date(at).toISOString() };
    this.ctx.bus.publish({ topic: 'presence', id: randomUUID(), data }).catch((err) => {
      this.ctx.log.warn({ err }, 'presence publish failed');
    });
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.flush().catch((err) => this.ctx.log.error({ err }, 'final heartbeat flush failed'));
    await this.shared?.close();
  }
}

export async function residentsActor(ctx: Ctx): Promise<Actor> {
  const residents = new Residents(ctx);
  await residents.start();
  ctx.services.presence = residents;
  return {
    name: 'residents',
    async stop() {
      if (ctx.services.presence === residents) ctx.services.presence = null;
      await residents.stop();
    },
  };
}
