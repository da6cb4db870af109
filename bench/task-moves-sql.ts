// What one group of task moves costs PostgreSQL (not a test; issue 47, docs/bench-writes-47.md):
// the group's statements as the node sends them (src/domain/task-commit.ts: the lock, the decisions of
// src/domain/task-moves.ts, task_moves_apply, the read back, COMMIT), one group after another on
// one connection, in a schema of its own, timed by the backend's own CPU time
// (/proc/<pid>/schedstat, so this machine's PostgreSQL only), which other load moves far less than
// it moves wall time. Posts, then claims, deliveries and approvals of the tasks posted, in groups
// of G, by 24 posters and 16 solvers as in the write suite.
// Run: node --import tsx bench/task-moves-sql.ts --database-url URL [--group 16] [--tasks 1600]
//        [--schema NAME] [--read-back-all] [file.sql ...]   (SQL files run after the migrations: another definition
//        of a function to compare with, side by side in alternating runs)
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { planMove, planPost } from '../src/domain/task-moves.js';
import { deadlineOf, TASK_INITIAL, type TaskEventType } from '../src/machines/task.js';
import { migrate } from '../src/store/migrate.js';
import { applyWritesQuery, getTasks, lockTasks, noWrites, submissionsQuery, type TaskRow, type TaskWrites } from '../src/store/tasks.js';
import { argValue, benchDatabaseUrl } from './lib/procs.js';

const args = process.argv.slice(2);
const url = benchDatabaseUrl(argValue(args, '--database-url'));
const G = Number(argValue(args, '--group') ?? 16);
const N = Number(argValue(args, '--tasks') ?? 1600);
const schema = argValue(args, '--schema') ?? `bench_sql_${randomBytes(4).toString('hex')}`;
const readBackAll = args.includes('--read-back-all');
const files = args.filter((a, i) => a.endsWith('.sql') && !args[i - 1]?.startsWith('--'));

const admin = postgres(url, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE SCHEMA "${schema}"`);
const sql = postgres(url, { max: 1, connection: { search_path: schema }, onnotice: () => {} });
try {
  await migrate(sql);
  for (const f of files) await sql.unsafe(readFileSync(f, 'utf8'));
  const members: number[] = [];
  for (let i = 0; i < 40; i++) {
    const [r] = await sql<{ id: number }[]>`INSERT INTO identities (id, name, zho_level, token_hash, invite_code)
      VALUES (nextval('member_number_seq'), ${`Member ${i}`}, 'ZHO-2', ${randomBytes(32)}, ${randomBytes(8).toString('hex')})
      RETURNING id::int`;
    const id = (r as { id: number }).id;
    members.push(id);
    await sql`INSERT INTO ledger_accounts (id, kind, identity_id, balance) VALUES (${`ai:${id}`}, 'identity', ${id}, 1000)`;
  }
  const posters = members.slice(0, 24);
  const solvers = members.slice(24);
  const c = await sql.reserve();
  const [{ pid }] = (await c.unsafe('SELECT pg_backend_pid() AS pid')) as unknown as [{ pid: number }];
  const cpuMs = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  const times = new Map<string, { apply: number[]; group: number[]; wall: number[] }>();
  const group = async (phase: string, ids: string[], decide: (locked: Map<string, TaskRow>) => TaskWrites) => {
    const t0 = cpuMs();
    const w0 = performance.now();
    await c.unsafe('BEGIN');
    const locked = new Map(ids.length > 0 ? (await lockTasks(c, ids)).map((r) => [r.id, r]) : []);
    const w = decide(locked);
    const q = applyWritesQuery(c, w);
    const t1 = cpuMs();
    await q.query;
    const t2 = cpuMs();
    // The node reads back new tasks only (src/domain/task-commit.ts: the moves' rows are the ones
    // decided); --read-back-all reads every row, as it did before.
    if (readBackAll || phase === 'post') await getTasks(c, ids.length > 0 ? ids : w.tasks.map((t) => t.id));
    if (phase !== 'post' && phase !== 'claim') await submissionsQuery(c, ids);
    await c.unsafe('COMMIT');
    const t3 = cpuMs();
    const m = times.get(phase) ?? { apply: [], group: [], wall: [] };
    m.apply.push(t2 - t1);
    m.group.push(t3 - t0);
    m.wall.push(performance.now() - w0);
    times.set(phase, m);
  };
  const now = new Date();
  const tasks: string[] = [];
  for (let i = 0; i < N; i += G) {
    const ids: string[] = [];
    await group('post', [], () => {
      const w = noWrites();
      for (let j = 0; j < G; j++) {
        const id = randomUUID();
        ids.push(id);
        const posterId = posters[(i + j) % posters.length] as number;
        const expiresAt = new Date(now.getTime() + (deadlineOf(TASK_INITIAL)?.afterMs ?? 0));
        const t = { id, title: 'bench task', body: 'a task posted by the benchmark', reward: 1, posterId, state: TASK_INITIAL };
        planPost(w, { ...t, escrowAccount: `escrow:task:${id}`, createdAt: now, expiresAt }, []);
      }
      return w;
    });
    tasks.push(...ids);
  }
  const claimer = new Map<string, number>();
  const phases: [string, TaskEventType][] = [
    ['claim', 'CLAIM'],
    ['deliver', 'SUBMIT'],
    ['approve', 'APPROVE'],
  ];
  for (const [phase, event] of phases) {
    for (let i = 0; i < tasks.length; i += G) {
      const ids = tasks.slice(i, i + G);
      await group(phase, ids, (locked) => {
        const w = noWrites();
        ids.forEach((id, j) => {
          const t = locked.get(id) as TaskRow;
          const actorId =
            event === 'CLAIM'
              ? (solvers[(i + j) % solvers.length] as number)
              : event === 'SUBMIT'
                ? (claimer.get(id) as number)
                : t.poster_id;
          if (event === 'CLAIM') claimer.set(id, actorId);
          planMove(w, t, event, { actorId, at: now, base: 'http://bench', ...(event === 'SUBMIT' ? { submission: 'the result' } : {}) });
        });
        return w;
      });
    }
  }
  c.release();
  const at = (a: number[], q: number) => [...a].sort((x, y) => x - y)[Math.floor(a.length * q)] as number;
  const median = (a: number[]) => at(a, 0.5);
  console.log(
    `PostgreSQL CPU per group of ${G} (ms, median over ${Math.ceil(N / G)} groups)${files.length ? ` with ${files.join(', ')}` : ''}:`,
  );
  for (const [phase, m] of times) {
    console.log(
      `  ${phase.padEnd(8)} task_moves_apply ${median(m.apply).toFixed(2)}   whole transaction ${median(m.group).toFixed(2)} (lower quartile ${at(m.group, 0.25).toFixed(2)})   (wall ${median(m.wall).toFixed(2)})`,
    );
  }
} finally {
  await sql.end();
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
