// Races: concurrent moves on one task resolve to exactly one outcome and pay exactly
// once. 20 concurrent approvals of a delivered task, or 10 cancels racing 10 claims on an open
// task, repeated over 200 tasks on PostgreSQL (fewer on embedded PGlite, whose single connection
// serialises transactions anyway); manual approvals racing the scheduler; scheduler passes racing
// each other (two nodes on one database when PostgreSQL is available).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toCommonsError } from '../../src/domain/errors.js';
import { runDue } from '../../src/domain/task-deadlines.js';
import { txWithRetry } from '../../src/store/retry.js';
import { type Answer, startTestServer, TestClock, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { conservation, delivered, type Member, member, move, post } from '../helpers/tasks.js';
import { waitFor } from '../helpers/wait.js';

const TASKS = usingRealPostgres() ? 200 : 40;
const CHUNK = 10;
const REWARD = 3;

const clock = new TestClock();
let s: TestServer;
let posters: Member[];
let solvers: Member[];
beforeAll(async () => {
  s = await startTestServer({}, { clock });
  posters = [];
  solvers = [];
  for (let i = 0; i < 10; i++) posters.push(await member(s, `Poster${i}`));
  for (let i = 0; i < 10; i++) solvers.push(await member(s, `Solver${i}`));
});
afterAll(async () => {
  await s.close();
});

const sql = () => s.app.ctx.sql;
const payoutsOf = async (ids: string[]) =>
  new Map(
    (
      await sql()<{ ref: string; n: number }[]>`
        SELECT ref, count(*)::int AS n FROM ledger_transfers
        WHERE ref IN ${sql()(ids.map((id) => `task:${id}`))} AND kind IN ('task_reward', 'task_refund') GROUP BY ref`
    ).map((r) => [r.ref.slice(5), r.n]),
  );
const statuses = (rs: Answer[]) => rs.map((r) => r.status);
const H = 3600_000;

async function chunks<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < n; start += CHUNK) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(CHUNK, n - start) }, (_, k) => fn(start + k)))));
  }
  return out;
}

describe(`races over ${TASKS} tasks`, () => {
  it('20 concurrent approvals, or 10 cancels against 10 claims: exactly one wins, credits move once', async () => {
    // What the solvers hold before (other tests in this file may have paid them already).
    const solverTotal = async () =>
      (
        await sql()<{ total: number }[]>`
          SELECT sum(balance)::int AS total FROM ledger_accounts WHERE id IN ${sql()(solvers.map((v) => `ai:${v.id}`))}`
      )[0]?.total ?? 0;
    const solversBefore = await solverTotal();
    const results = await chunks(TASKS, async (i) => {
      const poster = posters[i % posters.length] as Member;
      const solver = solvers[i % solvers.length] as Member;
      if (i % 2 === 0) {
        const id = await delivered(s, poster, solver, REWARD);
        const rs = await Promise.all(Array.from({ length: 20 }, () => move(s, poster, id, 'approve')));
        return { id, kind: 'approve' as const, rs };
      }
      const id = await post(s, poster, REWARD);
      const rs = await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          k % 2 === 0 ? move(s, poster, id, 'cancel') : move(s, solvers[k % 10] as Member, id, 'claim'),
        ),
      );
      return { id, kind: 'pair' as const, rs };
    });

    for (const r of results) {
      const codes = statuses(r.rs);
      expect(codes.filter((c) => c === 200)).toHaveLength(1);
      expect(codes.filter((c) => c === 409)).toHaveLength(19);
      expect(r.rs.filter((x) => x.status === 409).every((x) => x.json.error.code === 'INVALID_STATE')).toBe(true);
    }
    const ids = results.map((r) => r.id);
    const payouts = await payoutsOf(ids);
    const states = new Map(
      (await sql()<{ id: string; state: string }[]>`SELECT id::text AS id, state FROM tasks WHERE id IN ${sql()(ids)}`).map((r) => [
        r.id,
        r.state,
      ]),
    );
    for (const r of results) {
      const winner = r.rs.find((x) => x.status === 200)?.json.data.state;
      expect(states.get(r.id)).toBe(winner);
      // Approved or cancelled: paid out exactly once. Claimed: still fully in escrow.
      expect(payouts.get(r.id) ?? 0).toBe(winner === 'claimed' ? 0 : 1);
    }
    const [escrow] = await sql()<{ held: number }[]>`
      SELECT coalesce(sum(a.balance), 0)::int AS held FROM tasks t JOIN ledger_accounts a ON a.id = t.escrow_account WHERE t.id IN ${sql()(ids)}`;
    expect(escrow?.held).toBe([...states.values()].filter((st) => st === 'claimed').length * REWARD);
    // The solvers gained exactly one reward per task they won here.
    expect(await solverTotal()).toBe(solversBefore + [...states.values()].filter((st) => st === 'approved').length * REWARD);
    const c = await conservation(s);
    expect(c.held).toBe(c.expected);
  }, 600_000);

  it('manual approvals racing the scheduler at the deadline pay once', async () => {
    const n = 20;
    const ids = await chunks(n, (i) => delivered(s, posters[i % 10] as Member, solvers[(i + 1) % 10] as Member, REWARD));
    clock.advance(24 * H);
    const rs = await chunks(n, async (i) => {
      const id = ids[i] as string;
      const all = await Promise.all([
        ...Array.from({ length: 8 }, () => move(s, posters[i % 10] as Member, id, 'approve')),
        runDue(s.app.ctx),
        runDue(s.app.ctx),
      ]);
      return all.filter((x): x is Answer => typeof x !== 'number');
    });
    for (const r of rs) expect(r.every((x) => x.status === 409 && x.json.error.code === 'INVALID_STATE')).toBe(true);
    await runDue(s.app.ctx);
    const payouts = await payoutsOf(ids);
    for (const id of ids) expect(payouts.get(id)).toBe(1);
    const [ev] = await sql()<{ n: number }[]>`
      SELECT count(*)::int AS n FROM task_events WHERE task_id IN ${sql()(ids)} AND event = 'AUTO_APPROVE'`;
    expect(ev?.n).toBe(n);
  }, 300_000);

  it(`scheduler passes racing each other (${usingRealPostgres() ? 'two nodes on one PostgreSQL schema' : 'one embedded node'}) fire each deadline once`, async () => {
    const n = 30;
    const ids = await chunks(n, (i) => post(s, posters[i % 10] as Member, 1));
    const other = usingRealPostgres() ? await startTestServer({}, { clock, schema: s.config.databaseSchema as string }) : s;
    try {
      clock.advance(7 * 24 * H + 1);
      // (The nodes' own scheduler actors may join in; the count of events is what must hold.)
      await Promise.all([runDue(s.app.ctx), runDue(other.app.ctx), runDue(s.app.ctx), runDue(other.app.ctx)]);
      const events = async () =>
        (
          await sql()<{ n: number; tasks: number }[]>`
            SELECT count(*)::int AS n, count(DISTINCT task_id)::int AS tasks FROM task_events
            WHERE task_id IN ${sql()(ids)} AND event = 'EXPIRE_UNCLAIMED'`
        )[0];
      // A node's own scheduler pass may still hold its last task (SKIP LOCKED hides it from the
      // passes above) until it commits: wait for every deadline to have fired, then check that
      // none fired twice and nothing is left due.
      await waitFor(async () => (await events())?.tasks === n, 10_000, 'every deadline fired');
      expect(await runDue(s.app.ctx)).toBe(0);
      expect(await events()).toEqual({ n, tasks: n });
      const payouts = await payoutsOf(ids);
      for (const id of ids) expect(payouts.get(id)).toBe(1);
      const c = await conservation(s);
      expect(c.held).toBe(c.expected);
    } finally {
      if (other !== s) await other.app.close();
    }
  }, 300_000);
});

describe('retries', () => {
  const conflict = (code: string) => Object.assign(new Error('conflict'), { code });

  it('runs a transaction again after a serialization failure or a deadlock', async () => {
    let tries = 0;
    const out = await txWithRetry(s.app.ctx.sql, async (tx) => {
      tries++;
      await tx`SELECT 1`;
      if (tries === 1) throw conflict('40001');
      if (tries === 2) throw conflict('40P01');
      return 'done';
    });
    expect([out, tries]).toEqual(['done', 3]);
  });

  it('answers 503 UNAVAILABLE, never a 500, when every attempt loses', async () => {
    const lost = await txWithRetry(s.app.ctx.sql, async () => {
      throw conflict('40001');
    }).catch((e: unknown) => e);
    expect(toCommonsError(lost)).toMatchObject({ code: 'UNAVAILABLE', retryAfterS: 1 });
  });

  it('does not retry other errors', async () => {
    let tries = 0;
    await expect(
      txWithRetry(s.app.ctx.sql, async () => {
        tries++;
        throw conflict('23514');
      }),
    ).rejects.toMatchObject({ code: '23514' });
    expect(tries).toBe(1);
  });
});
