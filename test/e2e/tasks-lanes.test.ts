// Two groups of task writes in flight on PostgreSQL (TASK_COMMIT_LANES=2; docs/tasks.md "How a move
// is written"): a group whose task is held by another transaction does not hold back a group of
// moves on other tasks, and once the hold ends the held move is decided from the row as it then
// reads. The embedded store commits one group at a time (one lane), so this runs on PostgreSQL only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { conservation, type Member, member, move, post } from '../helpers/tasks.js';
import { waitFor } from '../helpers/wait.js';

const enabled = usingRealPostgres();
if (!enabled) console.log('task lanes test: needs DATABASE_URL (the embedded store commits one group at a time)');

describe.runIf(enabled)('task writes in two lanes', () => {
  let s: TestServer;
  beforeAll(async () => {
    // Lock and statement deadlines long enough for the held row (the held move must wait, not fail).
    s = await startTestServer({ TASK_COMMIT_LANES: '2', DB_LOCK_TIMEOUT_MS: '60000', DB_STATEMENT_TIMEOUT_MS: '60000' });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('a group waiting on a held task does not hold back a group of other tasks; the held move then goes on', async () => {
    const poster = await member(s, 'Lane Poster');
    const [a, b] = (await Promise.all([member(s, 'Lane Solver A'), member(s, 'Lane Solver B')])) as [Member, Member];
    const held = await post(s, poster, 2);
    const free = await post(s, poster, 2);
    const sql = s.app.ctx.sql;
    // Another transaction holds the first task's row (as a move on another node would).
    const holder = await sql.reserve();
    let released = false;
    try {
      await holder.unsafe('BEGIN');
      await holder.unsafe('SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE', [held]);
      const first = move(s, a, held, 'claim');
      // The first group is in its transaction, waiting for that row.
      const holderPid = (await holder.unsafe<{ pid: number }[]>('SELECT pg_backend_pid() AS pid'))[0]?.pid as number;
      await waitFor(
        async () =>
          (
            await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE ${holderPid} = ANY(pg_blocking_pids(pid))`
          )[0]?.n === 1,
        10_000,
        'the first claim waiting on the held row',
      );
      // One lane would queue this claim behind the waiting group; the second lane commits it now.
      const second = await move(s, b, free, 'claim');
      expect(second.status, second.text).toBe(200);
      expect(second.json.data.state).toBe('claimed');
      expect(second.json.data.claimer.registration_number).toBe(b.number);
      // The held claim is still waiting: nothing of it written yet.
      const [still] = await sql<{ state: string }[]>`SELECT state FROM tasks WHERE id = ${held}`;
      expect(still?.state).toBe('open');
      await holder.unsafe('COMMIT');
      released = true;
      const got = await first;
      expect(got.status, got.text).toBe(200);
      expect(got.json.data.claimer.registration_number).toBe(a.number);
    } finally {
      if (!released) await holder.unsafe('ROLLBACK').catch(() => {});
      holder.release();
    }
    // The escrows and balances still add up.
    const { held: total, expected } = await conservation(s);
    expect(total).toBe(expected);
  });
});
