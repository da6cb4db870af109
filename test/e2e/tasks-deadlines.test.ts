// Durable task deadlines: 7 days unclaimed -> closed and refunded, 72 h claimed
// without a submission -> open again, 24 h delivered -> approved automatically and paid; a late
// move never slips past a due deadline; a deadline due while the server is down fires once
// after it comes back; a pass that dies before commit leaves the deadline due.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusMessage } from '../../src/domain/ports.js';
import { runDue } from '../../src/domain/task-deadlines.js';
import { settleDue } from '../../src/domain/task-moves.js';
import * as store from '../../src/store/tasks.js';
import { sample, scrape } from '../helpers/metrics.js';
import { SharedStore } from '../helpers/nodes.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { conservation, delivered, type Member, me, member, move, post, submit } from '../helpers/tasks.js';
import { waitFor } from '../helpers/wait.js';

const H = 3600_000;
const D = 24 * H;

const eventsOf = async (s: TestServer, id: string): Promise<string[]> =>
  (await s.app.ctx.sql<{ event: string }[]>`SELECT event FROM task_events WHERE task_id = ${id} ORDER BY seq`).map((r) => r.event);
const payouts = async (s: TestServer, id: string): Promise<number> => {
  const [row] = await s.app.ctx.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM ledger_transfers WHERE ref = ${`task:${id}`} AND kind IN ('task_reward', 'task_refund')`;
  return row?.n ?? -1;
};

describe('deadlines on one server', () => {
  const clock = new TestClock();
  let s: TestServer;
  let poster: Member;
  let solver: Member;
  let third: Member;
  beforeAll(async () => {
    s = await startTestServer({}, { clock });
    poster = await member(s, 'Poster');
    solver = await member(s, 'Solver');
    third = await member(s, 'Third');
  });
  afterAll(async () => {
    await s.close();
  });
  const run = () => runDue(s.app.ctx);
  const task = async (id: string) => (await s.call('GET', `/api/v1/habitat/tasks/${id}`, { token: third.token })).json.data;

  it('closes an unclaimed task after 7 days and refunds the poster (the posting points stay)', async () => {
    const p = await member(s, 'Patient');
    const id = await post(s, p, 20);
    const seen: BusMessage[] = [];
    const off = s.app.ctx.bus.subscribe('tasks', (m) => seen.push(m));
    clock.advance(7 * D - 1);
    await run();
    expect((await task(id)).state).toBe('open');
    clock.advance(1);
    await run();
    off();
    const t = await task(id);
    expect(t).toMatchObject({ state: 'closed', closed_reason: 'expired', closed_at: t.expires_at, next_deadline: null });
    expect(await me(s, p)).toEqual({ balance: 1000, escrowed: 0, score: 7 });
    expect(seen.map((m) => (m.data as { event: string }).event)).toContain('EXPIRE_UNCLAIMED');
    expect(await eventsOf(s, id)).toEqual(['POST', 'EXPIRE_UNCLAIMED']);
  });

  it('returns a claimed task to open after 72 h without a submission, with a fresh 7-day window', async () => {
    const id = await post(s, poster, 5);
    await move(s, solver, id, 'claim');
    const claimed = await task(id);
    clock.advance(72 * H);
    await run();
    const t = await task(id);
    expect(t).toMatchObject({ state: 'open', claimer: null, claim_expires_at: null });
    expect(Date.parse(t.expires_at)).toBe(Date.parse(claimed.claim_expires_at) + 7 * D);
    // The lapsed claimer lost the claim: its submission now meets an open task.
    const late = await submit(s, solver, id);
    expect(late.status).toBe(409);
    expect(late.json.error.code).toBe('INVALID_STATE');
    expect((await move(s, third, id, 'claim')).status).toBe(200);
    expect(await eventsOf(s, id)).toEqual(['POST', 'CLAIM', 'CLAIM_LAPSED', 'CLAIM']);
  });

  it('approves a delivered task automatically after 24 h: the solver is paid and scores 30, the poster gets no approval points', async () => {
    const p = await member(s, 'Absent');
    const v = await member(s, 'Worker');
    const id = await delivered(s, p, v, 12);
    clock.advance(24 * H - 1);
    await run();
    expect((await task(id)).state).toBe('delivered');
    clock.advance(1);
    await run();
    const t = await task(id);
    expect(t).toMatchObject({ state: 'approved', approved_how: 'automatic', approved_at: t.approve_by });
    expect(await me(s, v)).toEqual({ balance: 1012, escrowed: 0, score: 30 });
    expect(await me(s, p)).toEqual({ balance: 988, escrowed: 0, score: 7 });
    expect(await payouts(s, id)).toBe(1);
  });

  it('a move that arrives after a due deadline meets the deadline first, and writes nothing when refused', async () => {
    const v = await member(s, 'Late');
    const id = await delivered(s, poster, v, 9);
    const open = await post(s, poster, 2);
    clock.advance(8 * D);
    const approve = await move(s, poster, id, 'approve');
    expect(approve.status).toBe(409);
    expect(approve.json.error.code).toBe('INVALID_STATE');
    const claim = await move(s, solver, open, 'claim');
    expect(claim.status).toBe(409);
    expect(claim.json.error.code).toBe('INVALID_STATE');
    expect(await eventsOf(s, id)).not.toContain('APPROVE');
    await run();
    expect((await task(id)).approved_how).toBe('automatic');
    expect((await task(open)).closed_reason).toBe('expired');
    expect(await me(s, v)).toMatchObject({ balance: 1009, score: 30 });
    expect(await payouts(s, id)).toBe(1);
    expect(await payouts(s, open)).toBe(1);
  });

  it('fires deadlines that fell due one after another in one pass (lapse, then expiry)', async () => {
    const id = await post(s, poster, 3);
    await move(s, solver, id, 'claim');
    clock.advance(72 * H + 7 * D);
    await run();
    expect(await eventsOf(s, id)).toEqual(['POST', 'CLAIM', 'CLAIM_LAPSED', 'EXPIRE_UNCLAIMED']);
    expect(await payouts(s, id)).toBe(1);
  });

  it('a pass that dies before commit leaves the deadline due; the next pass fires it once', async () => {
    const id = await post(s, poster, 6);
    let crashedSeq = '';
    await expect(
      s.app.ctx.sql.begin(async (tx) => {
        // Locked first, so the node's own scheduler skips this task until the crash.
        const locked = (await store.lockTask(tx, id)) as store.TaskRow;
        clock.advance(7 * D);
        const { fired } = await settleDue(tx, locked, clock.now(), s.url);
        expect(fired.map((f) => f.event)).toEqual(['EXPIRE_UNCLAIMED']);
        crashedSeq = fired[0]?.seq as string;
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash before commit');
    await run();
    await run();
    const rows = await s.app.ctx.sql<{ seq: string; event: string }[]>`
      SELECT seq::text AS seq, event FROM task_events WHERE task_id = ${id} ORDER BY seq`;
    expect(rows.map((r) => r.event)).toEqual(['POST', 'EXPIRE_UNCLAIMED']);
    // The crashed pass left no trace: the expiry that exists is a later one.
    expect(rows.map((r) => r.seq)).not.toContain(crashedSeq);
    expect(await payouts(s, id)).toBe(1);
    const c = await conservation(s);
    expect(c.held).toBe(c.expected);
  });
});

describe('a restart', () => {
  it('fires a deadline that fell due while the server was down, once', async () => {
    const clock = new TestClock();
    // A fast poll, so "the boot pass is over" is a condition: passes run one after another, and
    // the second starts only when the first has finished.
    const shared = new SharedStore({ TASK_DEADLINE_POLL_MS: '50' }, { clock });
    const passes = async (s: TestServer) => sample(await scrape(s), 'commons_scheduler_ticks_total{scheduler="task_deadlines"}') ?? 0;
    try {
      const s1 = await shared.start();
      const poster = await member(s1, 'Poster');
      const solver = await member(s1, 'Solver');
      const approveId = await delivered(s1, poster, solver, 15);
      const expireId = await post(s1, poster, 4);
      await shared.stop(s1);

      clock.advance(7 * D);
      const s2 = await shared.start();
      // The scheduler's boot pass fires both without anyone calling it.
      await waitFor(
        async () => {
          const rows = await s2.app.ctx.sql<{ state: string }[]>`SELECT state FROM tasks WHERE id IN (${approveId}, ${expireId})`;
          return rows.every((r) => r.state === 'approved' || r.state === 'closed');
        },
        15_000,
        'the boot pass to fire both deadlines',
      );
      expect(await eventsOf(s2, approveId)).toEqual(['POST', 'CLAIM', 'SUBMIT', 'AUTO_APPROVE']);
      expect(await eventsOf(s2, expireId)).toEqual(['POST', 'EXPIRE_UNCLAIMED']);
      expect(await runDue(s2.app.ctx)).toBe(0);

      const s3 = await shared.restart(s2);
      // Two passes started: the boot pass is over, and it fired nothing again.
      await waitFor(async () => (await passes(s3)) >= 2, 10_000, 'the boot pass to finish');
      expect(await runDue(s3.app.ctx)).toBe(0);
      expect(await eventsOf(s3, approveId)).toEqual(['POST', 'CLAIM', 'SUBMIT', 'AUTO_APPROVE']);
      expect(await payouts(s3, approveId)).toBe(1);
      expect(await payouts(s3, expireId)).toBe(1);
      expect(await me(s3, solver)).toEqual({ balance: 1015, escrowed: 0, score: 30 });
      expect(await me(s3, poster)).toEqual({ balance: 985, escrowed: 0, score: 14 });
    } finally {
      await shared.close();
    }
  }, 180_000);
});
