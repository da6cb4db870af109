// Drives the signal scheduler from tests: advance the test clock one interval, then tick until
// that slot has its emission. The real-time timer may be mid-tick on the previous slot (then
// tick() shares its result) or may emit the new slot first (then the emission is read back).
import { expect } from 'vitest';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { type SignalEntry, slotOf } from '../../src/domain/signal.js';
import type { TestClock, TestServer } from './server.js';

export async function emitNext(s: TestServer, clock: TestClock): Promise<SignalEntry> {
  clock.advance(s.config.signalIntervalS * 1000);
  const slot = slotOf(s.app.ctx, clock.now());
  for (let i = 0; i < 5; i++) {
    const r = await schedulerOf(s.app).tick();
    expect(r.role).toBe('leader');
    // A tick already in flight when the clock moved emits the previous slot: keep ticking.
    if (r.emission && slotOf(s.app.ctx, new Date(r.emission.entry.emitted_at)) === slot) return r.emission.entry;
    const [row] = await s.app.ctx.sql<{ id: string; emitted_at: Date; payload: SignalEntry['payload'] }[]>`
      SELECT id, emitted_at, payload FROM signal_emissions WHERE slot = ${slot}`;
    if (row) {
      // Emitted by the timer's tick: wait for that tick to finish handing it to the deliverers.
      await schedulerOf(s.app).tick();
      return { id: row.id, emitted_at: row.emitted_at.toISOString(), payload: row.payload };
    }
  }
  throw new Error(`slot ${slot} was never emitted`);
}
