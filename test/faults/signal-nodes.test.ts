// Exactly one emission per tick. With real PostgreSQL: two nodes sharing one schema
// elect a leader with an advisory lock on a dedicated connection, emit once per tick between
// them, and the other takes over within one interval when the holder's session dies. Embedded
// (PGlite) there is one node; the UNIQUE tick slot is the database's own guard either way.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { slotOf } from '../../src/domain/signal.js';
import { insertEmission } from '../../src/store/signal.js';
import { twoNodes } from '../helpers/nodes.js';
import { startTestServer, TestClock, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { emitNext } from '../helpers/signal.js';
import { waitFor } from '../helpers/wait.js';

const clock = new TestClock();
const INTERVAL_S = 30;
const env = { SIGNAL_INTERVAL_S: String(INTERVAL_S) };

const perSlot = async (s: TestServer, slot: number): Promise<number> => {
  const [row] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_emissions WHERE slot = ${slot}`;
  return row?.n ?? 0;
};

describe('the database keeps one emission per tick', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer(env, { clock });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('refuses a second emission for the same slot, whoever inserts it', async () => {
    await emitNext(s, clock);
    const slot = slotOf(s.app.ctx, clock.now());
    const dup = await insertEmission(s.app.ctx.sql, { id: randomUUID(), slot, emittedAt: clock.now(), payload: {}, nodeId: 'other' });
    expect(dup).toBeNull();
    expect(await perSlot(s, slot)).toBe(1);
  });
});

// Registered always and skipped without PostgreSQL, so CI's skip check sees it (.ci/summary.mjs).
describe.runIf(usingRealPostgres())('two nodes sharing PostgreSQL', () => {
  let a: TestServer;
  let b: TestServer;
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ a, b, close } = await twoNodes(env, { clock, redis: false }));
    // Let the ticks each node runs at start finish (tick() shares a tick in flight).
    await Promise.all([schedulerOf(a.app).tick(), schedulerOf(b.app).tick()]);
  });
  afterAll(async () => {
    await close();
  });

  it('emit exactly one signal per tick between them', async () => {
    for (let i = 0; i < 3; i++) {
      clock.advance(INTERVAL_S * 1000);
      const [ra, rb] = await Promise.all([schedulerOf(a.app).tick(), schedulerOf(b.app).tick()]);
      expect([ra.role, rb.role].sort()).toEqual(['follower', 'leader']);
      expect(await perSlot(a, slotOf(a.app.ctx, clock.now()))).toBe(1);
    }
  });

  it('a follower does not emit while the leader lives, even alone in a new tick', async () => {
    clock.advance(INTERVAL_S * 1000);
    const ta = await schedulerOf(a.app).tick();
    const tb = await schedulerOf(b.app).tick();
    expect([ta.role, tb.role].sort()).toEqual(['follower', 'leader']);
    const lead = ta.role === 'leader' ? a : b;
    const other = lead === a ? b : a;
    clock.advance(INTERVAL_S * 1000);
    expect(await schedulerOf(other.app).tick()).toEqual({ role: 'follower', emission: null });
    expect(await perSlot(a, slotOf(a.app.ctx, clock.now()))).toBe(0);
    const led = await schedulerOf(lead.app).tick();
    expect(led.role).toBe('leader');
    expect(led.emission).not.toBeNull();
  });

  it('takes over within one interval when the holder dies', async () => {
    clock.advance(INTERVAL_S * 1000);
    const ta = await schedulerOf(a.app).tick();
    const lead = ta.role === 'leader' ? a : b;
    const other = lead === a ? b : a;
    const pid = await schedulerOf(lead.app).leaderPid();
    expect(pid).not.toBeNull();
    // The holder's session dies (as when its process or host does): PostgreSQL frees the lock.
    await other.app.ctx.sql`SELECT pg_terminate_backend(${pid as number})`;
    // pg_terminate_backend only signals; the session ends a moment later (well within an interval).
    await waitFor(
      async () => (await other.app.ctx.sql`SELECT 1 FROM pg_stat_activity WHERE pid = ${pid as number}`).length === 0,
      5000,
      'the session to end',
    );
    clock.advance(INTERVAL_S * 1000);
    const next = await schedulerOf(other.app).tick();
    expect(next.role).toBe('leader');
    expect(next.emission).not.toBeNull();
    // The old leader comes back as a follower.
    clock.advance(INTERVAL_S * 1000);
    const back = await schedulerOf(lead.app).tick();
    expect(back.role).toBe('follower');
    expect((await schedulerOf(other.app).tick()).role).toBe('leader');
    expect(await perSlot(a, slotOf(a.app.ctx, clock.now()))).toBe(1);
  });
});
