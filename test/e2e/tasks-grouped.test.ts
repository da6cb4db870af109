// Task posts and moves are grouped (src/domain/task-commit.ts openTaskWrites, docs/tasks.md "How a move
// is written"): writes that arrive while a group commits share the next transaction and its one
// writing statement (sql/functions/task_moves_apply.sql). Each writer is answered with its own
// task; a refused move is answered alone and spoils none of its group; two moves of one task in
// one group go in turns (one claim wins); an overdraft fails the group, whose writes then go one
// by one, so only the overdraft is refused, and so does a write whose member's token (taken from
// the node's token cache) is no longer its own: refused alone (401), nothing of it written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../../src/domain/task-view.js';
import * as tasks from '../../src/domain/tasks.js';
import { hashToken } from '../../src/domain/tokens.js';
import type { IdentityRow } from '../../src/store/identities.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { conservation, type Member, me, member, move, post, submit } from '../helpers/tasks.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

interface Counted {
  commits: number;
  writes: number;
}
const group = () => s.app.ctx.services.taskWrites as unknown as Counted;
// The use cases read the member's id, and a claim its name (the claim is answered with it).
const names = new Map<number, string>();
/** The member as a task write takes it (no token: not from the cache). */
const row = (m: Member, tokenHash?: Buffer) => ({ member: { id: m.id, name: names.get(m.id) } as IdentityRow, tokenHash });
const named = async (ms: Member[]) => {
  const got = await s.app.ctx.sql<
    { id: number; name: string }[]
  >`SELECT id::int AS id, name FROM identities WHERE id = ANY(${ms.map((m) => m.id)})`;
  for (const r of got) names.set(r.id, r.name);
};
const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (err: { code?: string }) => ({ ok: false as const, code: err.code }),
  );

describe('grouped task writes', () => {
  it('writes submitted while a group commits share the next; refusals and a lost race stay alone', async () => {
    const poster = await member(s, 'Group Poster');
    const solvers = await Promise.all(Array.from({ length: 4 }, (_, i) => member(s, `Group Solver ${i}`)));
    const ids = await Promise.all(Array.from({ length: 6 }, () => post(s, poster, 2)));
    await named([poster, ...solvers]);
    const before = { ...group() };
    // All submitted in one turn: the first starts a commit at once, the others queue behind it
    // and go together in the next.
    const asked = [
      ...ids.slice(0, 4).map((id, i) => tasks.actOnTask(s.app.ctx, row(solvers[i] as Member), id, 'CLAIM')),
      // A second claim of the first task: decided after the first one's write, in the same transaction.
      tasks.actOnTask(s.app.ctx, row(solvers[1] as Member), ids[0] as string, 'CLAIM'),
      // The poster may not claim its own task (403), and nobody approves an open task (409).
      tasks.actOnTask(s.app.ctx, row(poster), ids[4] as string, 'CLAIM'),
      tasks.actOnTask(s.app.ctx, row(poster), ids[5] as string, 'APPROVE'),
      tasks.postTask(s.app.ctx, row(solvers[3] as Member), { title: 'grouped post', body: 'posted in a group', reward_points: 3 }),
    ].map(settle);
    const got = await Promise.all(asked);
    expect(group().writes - before.writes).toBe(8);
    // Without grouping, 8 transactions; grouped, the first alone and the seven behind it together
    // (or all eight at once, when the group waited for writers after its last commit).
    expect(group().commits - before.commits).toBeLessThanOrEqual(2);

    const claims = got.slice(0, 4);
    for (const [i, c] of claims.entries()) {
      expect(c.ok).toBe(true);
      const view = (c as { value: TaskView }).value;
      expect(view.id).toBe(ids[i]);
      expect(view.state).toBe('claimed');
      expect(view.claimer?.registration_number).toBe((solvers[i] as Member).number);
      // Answered from the row decided (not read back): the claimer as a read shows it.
      const read = await s.call('GET', `/api/v1/habitat/tasks/${ids[i]}`, { token: poster.token });
      expect(view.claimer).toEqual(read.json.data.claimer);
      expect(view.claimer?.name).toBe(`Group Solver ${i}`);
    }
    expect(got[4]).toEqual({ ok: false, code: 'INVALID_STATE' });
    expect(got[5]).toEqual({ ok: false, code: 'FORBIDDEN' });
    expect(got[6]).toEqual({ ok: false, code: 'INVALID_STATE' });
    const posted = got[7] as { ok: true; value: TaskView };
    expect(posted.ok).toBe(true);
    expect(posted.value.state).toBe('open');
    expect(posted.value.reward_points).toBe(3);

    // What was written: one CLAIM event per won claim, one inbox item each for the poster, and the
    // new task's escrow and points; nothing for the refused moves.
    const events = await s.app.ctx.sql<{ task_id: string; event: string; version: number }[]>`
      SELECT task_id::text, event, version FROM task_events WHERE task_id IN ${s.app.ctx.sql([...ids, posted.value.id])} ORDER BY seq`;
    expect(events.filter((e) => e.event === 'CLAIM').map((e) => e.task_id)).toEqual(ids.slice(0, 4));
    expect(events.filter((e) => e.event === 'CLAIM').every((e) => e.version === 1)).toBe(true);
    expect(events.filter((e) => e.event === 'POST')).toHaveLength(7);
    const [items] = await s.app.ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM inbox_items WHERE identity_id = ${poster.id} AND kind = 'task' AND excerpt LIKE 'claimed:%'`;
    expect(items?.n).toBe(4);
    expect((await me(s, solvers[3] as Member)).escrowed).toBe(3);
    const c = await conservation(s);
    expect(c.held).toBe(c.expected);
  });

  it('an overdraft in a group is refused alone: its neighbours commit', async () => {
    const rich = await member(s, 'Group Rich');
    const poor = await member(s, 'Group Poor');
    // The poor member spends all but 2 of its credits (a task of 50, 19 times, and one of 48).
    for (let i = 0; i < 19; i++) await post(s, poor, 50);
    await post(s, poor, 48);
    const input = (reward: number) => ({ title: 'grouped', body: 'a grouped post', reward_points: reward });
    const got = await Promise.all(
      [
        tasks.postTask(s.app.ctx, row(rich), input(5)),
        tasks.postTask(s.app.ctx, row(rich), input(6)),
        tasks.postTask(s.app.ctx, row(poor), input(3)),
        tasks.postTask(s.app.ctx, row(rich), input(7)),
      ].map(settle),
    );
    expect(got.map((g) => g.ok)).toEqual([true, true, false, true]);
    expect(got[2]).toEqual({ ok: false, code: 'INSUFFICIENT_CREDITS' });
    expect((await me(s, rich)).escrowed).toBe(18);
    expect((await me(s, poor)).balance).toBe(2);
    expect((await me(s, poor)).escrowed).toBe(998);
    const c = await conservation(s);
    expect(c.held).toBe(c.expected);
  });

  it('a write whose token was rotated away is refused alone (401); its group commits, the check in its transaction', async () => {
    const poster = await member(s, 'Token Poster');
    const stale = await member(s, 'Token Stale');
    const fresh = await member(s, 'Token Fresh');
    const ids = await Promise.all([post(s, poster, 2), post(s, poster, 2)]);
    const before = { ...group() };
    const hash = (m: Member) => hashToken(m.token);
    const staleHash = hash(stale);
    // Its token changed in the database only (as a rotation on a node whose bus message has not
    // come): the hash this node would have cached is no longer the member's.
    await s.app.ctx.sql`UPDATE identities SET token_hash = ${hashToken(`${stale.token}x`)} WHERE id = ${stale.id}`;
    const input = { title: 'with a token', body: 'checked in its transaction', reward_points: 4 };
    const got = await Promise.all(
      [
        tasks.actOnTask(s.app.ctx, row(fresh, hash(fresh)), ids[0] as string, 'CLAIM'),
        tasks.actOnTask(s.app.ctx, row(stale, staleHash), ids[1] as string, 'CLAIM'),
        tasks.postTask(s.app.ctx, row(stale, staleHash), input),
        tasks.postTask(s.app.ctx, row(fresh, hash(fresh)), input),
      ].map(settle),
    );
    expect(got.map((g) => (g.ok ? 'ok' : g.code))).toEqual(['ok', 'UNAUTHORIZED', 'UNAUTHORIZED', 'ok']);
    expect(group().writes - before.writes).toBe(2);
    const tasksOf = async (m: Member) =>
      (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM tasks WHERE poster_id = ${m.id} OR claimer_id = ${m.id}`)[0]?.n;
    expect(await tasksOf(stale)).toBe(0);
    expect(await tasksOf(fresh)).toBe(2);
    const [second] = await s.app.ctx.sql<
      { state: string; version: number }[]
    >`SELECT state, version FROM tasks WHERE id = ${ids[1] as string}`;
    expect(second).toEqual({ state: 'open', version: 0 });
    const [balance] = await s.app.ctx.sql<{ b: number }[]>`SELECT balance::int AS b FROM ledger_accounts WHERE id = ${`ai:${stale.id}`}`;
    expect(balance?.b).toBe(1000);
    const c = await conservation(s);
    expect(c.held).toBe(c.expected);
  });

  it('a move answered from its decided row answers the task exactly as a read of it then shows it', async () => {
    // Deliveries, approvals and cancels are answered from the row the decision leaves, not read
    // back (src/domain/task-commit.ts); the read after must show the same record.
    const poster = await member(s, 'Decided Poster');
    const solver = await member(s, 'Decided Solver');
    const same = async (answer: Promise<{ status: number; text: string; json: { data: unknown } }>, id: string) => {
      const r = await answer;
      expect(r.status, r.text).toBe(200);
      const read = await s.call('GET', `/api/v1/habitat/tasks/${id}`, { token: poster.token });
      expect(r.json.data).toEqual(read.json.data);
    };
    const t1 = await post(s, poster, 3);
    await same(move(s, solver, t1, 'claim'), t1);
    await same(submit(s, solver, t1), t1);
    await same(move(s, poster, t1, 'approve'), t1);
    const t2 = await post(s, poster, 3);
    await same(move(s, poster, t2, 'cancel'), t2);
    // A claim whose deadline passed: the cancel meets the lapse first (two moves in one decision).
    const t3 = await post(s, poster, 3);
    await same(move(s, solver, t3, 'claim'), t3);
    await s.app.ctx.sql`UPDATE tasks SET claim_expires_at = now() - interval '1 minute' WHERE id = ${t3}`;
    await same(move(s, poster, t3, 'cancel'), t3);
    const [lapsed] = await s.app.ctx.sql<{ events: string[] }[]>`
      SELECT array_agg(event ORDER BY version) AS events FROM task_events WHERE task_id = ${t3}`;
    expect(lapsed?.events).toEqual(['POST', 'CLAIM', 'CLAIM_LAPSED', 'CANCEL']);
  });
});
