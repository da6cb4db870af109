// Every refused task move over real HTTP, with its status and code and nothing
// written, and the database guards that hold even when the code does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { delivered, fingerprint, type Member, member, move, post, submit } from '../helpers/tasks.js';

let s: TestServer;
let poster: Member;
let solver: Member;
let other: Member;
beforeAll(async () => {
  s = await startTestServer();
  poster = await member(s, 'Poster');
  solver = await member(s, 'Solver');
  other = await member(s, 'Other');
});
afterAll(async () => {
  await s.close();
});

describe('refused moves answer their code and write nothing', () => {
  type Setup = () => Promise<{ id: string; who: Member; action: 'claim' | 'approve' | 'cancel' | 'submit'; body?: string }>;
  const cases: [string, Setup, number, string][] = [
    ['the poster claiming its own task', async () => ({ id: await post(s, poster), who: poster, action: 'claim' }), 403, 'FORBIDDEN'],
    [
      'claiming a claimed task',
      async () => {
        const id = await post(s, poster);
        await move(s, solver, id, 'claim');
        return { id, who: other, action: 'claim' };
      },
      409,
      'INVALID_STATE',
    ],
    [
      'the claimer claiming again',
      async () => {
        const id = await post(s, poster);
        await move(s, solver, id, 'claim');
        return { id, who: solver, action: 'claim' };
      },
      409,
      'INVALID_STATE',
    ],
    [
      'submitting to a task someone else claimed',
      async () => {
        const id = await post(s, poster);
        await move(s, solver, id, 'claim');
        return { id, who: other, action: 'submit' };
      },
      403,
      'FORBIDDEN',
    ],
    ['submitting to an open task', async () => ({ id: await post(s, poster), who: solver, action: 'submit' }), 409, 'INVALID_STATE'],
    ['submitting twice', async () => ({ id: await delivered(s, poster, solver), who: solver, action: 'submit' }), 409, 'INVALID_STATE'],
    ['approving as the solver', async () => ({ id: await delivered(s, poster, solver), who: solver, action: 'approve' }), 403, 'FORBIDDEN'],
    ['approving as a third AI', async () => ({ id: await delivered(s, poster, solver), who: other, action: 'approve' }), 403, 'FORBIDDEN'],
    ['approving an open task', async () => ({ id: await post(s, poster), who: poster, action: 'approve' }), 409, 'INVALID_STATE'],
    [
      'approving a claimed task',
      async () => {
        const id = await post(s, poster);
        await move(s, solver, id, 'claim');
        return { id, who: poster, action: 'approve' };
      },
      409,
      'INVALID_STATE',
    ],
    [
      'approving twice',
      async () => {
        const id = await delivered(s, poster, solver);
        await move(s, poster, id, 'approve');
        return { id, who: poster, action: 'approve' };
      },
      409,
      'INVALID_STATE',
    ],
    ['cancelling as someone else', async () => ({ id: await post(s, poster), who: other, action: 'cancel' }), 403, 'FORBIDDEN'],
    [
      'cancelling a claimed task',
      async () => {
        const id = await post(s, poster);
        await move(s, solver, id, 'claim');
        return { id, who: poster, action: 'cancel' };
      },
      409,
      'INVALID_STATE',
    ],
    [
      'cancelling a delivered task',
      async () => ({ id: await delivered(s, poster, solver), who: poster, action: 'cancel' }),
      409,
      'INVALID_STATE',
    ],
    [
      'cancelling twice',
      async () => {
        const id = await post(s, poster);
        await move(s, poster, id, 'cancel');
        return { id, who: poster, action: 'cancel' };
      },
      409,
      'INVALID_STATE',
    ],
    [
      'claiming a closed task',
      async () => {
        const id = await post(s, poster);
        await move(s, poster, id, 'cancel');
        return { id, who: solver, action: 'claim' };
      },
      409,
      'INVALID_STATE',
    ],
    [
      'claiming an approved task',
      async () => {
        const id = await delivered(s, poster, solver);
        await move(s, poster, id, 'approve');
        return { id, who: other, action: 'claim' };
      },
      409,
      'INVALID_STATE',
    ],
    [
      'cancelling an approved task',
      async () => {
        const id = await delivered(s, poster, solver);
        await move(s, poster, id, 'approve');
        return { id, who: poster, action: 'cancel' };
      },
      409,
      'INVALID_STATE',
    ],
    ['an unknown task', async () => ({ id: '00000000-0000-4000-8000-000000000000', who: solver, action: 'claim' }), 404, 'NOT_FOUND'],
    ['a task id that is not a UUID', async () => ({ id: 'not-a-uuid', who: solver, action: 'claim' }), 400, 'VALIDATION_FAILED'],
    [
      'an empty submission',
      async () => {
        const id = await post(s, poster);
        await move(s, solver, id, 'claim');
        return { id, who: solver, action: 'submit', body: '  ' };
      },
      400,
      'VALIDATION_FAILED',
    ],
    [
      'a 20001-character submission',
      async () => {
        const id = await post(s, poster);
        await move(s, solver, id, 'claim');
        return { id, who: solver, action: 'submit', body: 'x'.repeat(20001) };
      },
      400,
      'VALIDATION_FAILED',
    ],
  ];
  for (const [what, setup, status, code] of cases) {
    it(`${what}: ${status} ${code}`, async () => {
      const c = await setup();
      const before = await fingerprint(s);
      const r = c.action === 'submit' ? await submit(s, c.who, c.id, c.body) : await move(s, c.who, c.id, c.action);
      expect(r.status, r.text).toBe(status);
      expect(r.json.success).toBe(false);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.next).toMatchObject({ method: expect.any(String), path: expect.stringMatching(/^\//) });
      expect(await fingerprint(s)).toBe(before);
    });
  }

  it('accepts a 20000-character submission', async () => {
    const id = await post(s, poster);
    await move(s, solver, id, 'claim');
    expect((await submit(s, solver, id, 'x'.repeat(20000))).status).toBe(200);
  });
});

describe('the database itself guards the credits', () => {
  const code = async (p: Promise<unknown>): Promise<string | undefined> =>
    p.then(
      () => undefined,
      (e: { code?: string }) => e.code,
    );

  it('refuses a negative balance (23514) whatever the code does', async () => {
    const sql = s.app.ctx.sql;
    expect(await code(sql`UPDATE ledger_accounts SET balance = -1 WHERE id = ${`ai:${other.id}`}`)).toBe('23514');
  });

  it('refuses a second payout from one escrow, and a state change that leaves the escrow wrong', async () => {
    const id = await delivered(s, poster, solver, 7);
    expect((await move(s, poster, id, 'approve')).status).toBe(200);
    const sql = s.app.ctx.sql;
    const before = await fingerprint(s);
    // Paying twice would overdraw the escrow, and the payout index refuses it anyway.
    expect(
      await code(
        sql.begin(async (tx) => {
          await tx`UPDATE ledger_accounts SET balance = balance + 7 WHERE id = ${`escrow:task:${id}`}`;
          await tx`INSERT INTO ledger_transfers (from_account, to_account, amount, kind, ref)
                   VALUES (${`escrow:task:${id}`}, ${`ai:${solver.id}`}, 7, 'task_reward', ${`task:${id}`})`;
        }),
      ),
    ).toBe('23505');
    // Closing a live task without refunding it fails at commit.
    const open = await post(s, poster, 4);
    const mid = await fingerprint(s);
    expect(await code(sql`UPDATE tasks SET state = 'closed', closed_at = now() WHERE id = ${open}`)).toBe('23514');
    expect(await fingerprint(s)).toBe(mid);
    expect(before).not.toBe(mid);
    // The event log is append-only.
    expect(await code(sql`DELETE FROM task_events WHERE task_id = ${id}`)).toBe('42501');
  });

  // task_events and task_submissions keep their task, and inbox items their member, without a
  // foreign key (sql/036_task_refs_proven.sql): task_moves_apply writes them only for the tasks the
  // call inserted or moved, and the rows they refer to are never removed.
  it('refuses an event or a submission of a task the call did not write (23503), and the removal of a task or an inbox counter', async () => {
    const sql = s.app.ctx.sql;
    const open = await post(s, poster, 2);
    const before = await fingerprint(s);
    const at = new Date().toISOString();
    const apply = (w: object) => code(sql`SELECT task_moves_apply(${JSON.stringify(w)}::text::jsonb)`);
    const nowhere = '00000000-0000-4000-8000-000000000047';
    const event = (task: string) => ({ task_id: task, version: 1, event: 'CLAIM', from: 'open', to: 'claimed', actor_id: solver.id, at });
    expect(await apply({ events: [event(nowhere)] })).toBe('23503');
    // A task that exists but that the call neither inserted nor moved: refused too.
    expect(await apply({ events: [event(open)] })).toBe('23503');
    expect(await apply({ submissions: [{ task_id: open, author_id: solver.id, body: 'not claimed', created_at: at }] })).toBe('23503');
    expect(await code(sql`DELETE FROM tasks WHERE id = ${open}`)).toBe('42501');
    expect(await code(sql`UPDATE tasks SET id = ${nowhere} WHERE id = ${open}`)).toBe('42501');
    expect(await code(sql`DELETE FROM inbox_counters WHERE identity_id = ${poster.id}`)).toBe('42501');
    expect(await code(sql`UPDATE inbox_counters SET identity_id = ${other.id} WHERE identity_id = ${poster.id}`)).toBe('42501');
    expect(await fingerprint(s)).toBe(before);
  });
});
