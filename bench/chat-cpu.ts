// Chat CPU per post (not a test; issue 47): POST /api/v1/chat under wrk, the project and the naive
// server with searchable chat one after the other, each measured by CPU, not by rate: the server
// process's CPU (/proc), PostgreSQL's CPU in the backends of this database (/proc of each backend
// pg_stat_activity lists), both per post; and for the project, PostgreSQL's time per post in each
// SQL function (pg_stat_user_functions, which needs track_functions = 'all': set here on the
// database given, ALTER DATABASE, so use a database of your own), its commits per post (group size)
// and its indexer's steps. CPU per post moves far less than a rate with other load on the machine.
//   node --import tsx bench/chat-cpu.ts --database-url postgres://root@127.0.0.1:5432/mine
//       [--seconds 8] [--connections 16] [--rounds 2] [--project-only]
// It starts the server from the current directory's dist/ (as the other benches): run it from
// another worktree to measure that tree's build (`cd ../before && node --import tsx ../wt/bench/chat-cpu.ts`).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { ensureWrk, runWrk } from './lib/http-wrk.js';
import { argValue, cpuSeconds, type Proc, startCommons, startRole } from './lib/procs.js';
import { register } from './lib/task-moves.js';
import { BODY } from './lib/write-measure.js';

type Sql = ReturnType<typeof postgres>;

/** CPU seconds of each backend of this database now (pid -> seconds). */
async function backendsCpu(sql: Sql): Promise<Map<number, number>> {
  const rows = await sql<
    { pid: number }[]
  >`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const s = cpuSeconds(pid);
    if (!Number.isNaN(s)) out.set(pid, s);
  }
  return out;
}

async function xacts(sql: Sql): Promise<number> {
  await sql`SELECT pg_stat_clear_snapshot()`;
  const [r] = await sql<
    { n: number }[]
  >`SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = current_database()`;
  return r?.n ?? 0;
}

async function functionStats(sql: Sql): Promise<Map<string, { calls: number; self: number; total: number }>> {
  const rows = await sql<{ f: string; calls: number; self: number; total: number }[]>`
    SELECT schemaname || '.' || funcname AS f, calls::float8 AS calls, self_time AS self, total_time AS total FROM pg_stat_user_functions`;
  return new Map(rows.map((r) => [r.f.replace(/^[^.]*\./, ''), { calls: r.calls, self: r.self, total: r.total }]));
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

interface Sample {
  server: string;
  rps: number;
  p99_ms: number;
  node_us: number;
  pg_us: number;
  load: string;
  /** Transactions this database committed per post (every server and helper on it; pg_stat_database). */
  xacts_per_post: number;
  per_commit?: number;
  /** The mean time of a group's commit (the statement's round trip, its commit included) and the posts' median latency. */
  commit_ms?: number;
  p50_ms?: number;
  per_step?: number;
}

async function measure(
  sql: Sql,
  name: string,
  p: Proc,
  headers: Record<string, string>,
  o: { seconds: number; connections: number },
  project: boolean,
): Promise<Sample & { fns?: Map<string, { calls: number; self: number; total: number }> }> {
  const url = `http://127.0.0.1:${p.port}`;
  await sql`SELECT pg_stat_clear_snapshot()`;
  const f0 = project ? await functionStats(sql) : null;
  const c0 = project ? await metric(url, 'commons_chat_commit_seconds_count') : 0;
  const cs0 = project ? await metric(url, 'commons_chat_commit_seconds_sum') : 0;
  const s0 = project ? await metric(url, 'commons_chat_index_steps_total') : 0;
  const x0 = await xacts(sql);
  const b0 = await backendsCpu(sql);
  const n0 = cpuSeconds(p.pid);
  const r = await runWrk({
    url: `${url}/api/v1/chat`,
    seconds: o.seconds,
    connections: o.connections,
    method: 'POST',
    body: BODY,
    headers: { 'content-type': 'application/json', ...headers },
    serverPid: p.pid,
  });
  // The indexer's backlog: let it drain, its work is the post's too.
  if (project) {
    const end = performance.now() + 10_000;
    while ((await metric(url, 'commons_chat_unindexed_messages')) > 0 && performance.now() < end)
      await new Promise((ok) => setTimeout(ok, 20));
  }
  const n1 = cpuSeconds(p.pid);
  const b1 = await backendsCpu(sql);
  let pg = 0;
  for (const [pid, s] of b1) pg += s - (b0.get(pid) ?? 0);
  await sql`SELECT pg_stat_clear_snapshot()`;
  await new Promise((ok) => setTimeout(ok, 1100));
  const x1 = await xacts(sql);
  const posts = r.requests ?? r.rps * o.seconds;
  const sample: Sample & { fns?: Map<string, { calls: number; self: number; total: number }> } = {
    server: name,
    rps: Math.round(r.rps),
    p99_ms: r.p99_ms,
    node_us: Math.round((1e6 * (n1 - n0)) / posts),
    pg_us: Math.round((1e6 * pg) / posts),
    load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    xacts_per_post: Number(((x1 - x0) / posts).toFixed(3)),
  };
  if (project && f0) {
    await sql`SELECT pg_stat_clear_snapshot()`;
    // Function statistics are flushed by each backend when it goes idle (at most once a second).
    await new Promise((ok) => setTimeout(ok, 1200));
    await sql`SELECT pg_stat_clear_snapshot()`;
    const f1 = await functionStats(sql);
    const fns = new Map<string, { calls: number; self: number; total: number }>();
    for (const [f, v] of f1) {
      const b = f0.get(f) ?? { calls: 0, self: 0, total: 0 };
      if (v.calls - b.calls > 0)
        fns.set(f, { calls: (v.calls - b.calls) / posts, self: (v.self - b.self) / posts, total: (v.total - b.total) / posts });
    }
    sample.fns = fns;
    const commits = (await metric(url, 'commons_chat_commit_seconds_count')) - c0;
    sample.per_commit = Number((posts / commits).toFixed(1));
    sample.commit_ms = Number(((1000 * ((await metric(url, 'commons_chat_commit_seconds_sum')) - cs0)) / commits).toFixed(2));
    sample.p50_ms = r.p50_ms;
    sample.per_step = Number((posts / ((await metric(url, 'commons_chat_index_steps_total')) - s0)).toFixed(1));
  }
  return sample;
}

const args = process.argv.slice(2);
const dbUrl = argValue(args, '--database-url');
if (!dbUrl) throw new Error('--database-url of a database of your own is needed (track_functions is set on it)');
const o = { seconds: Number(argValue(args, '--seconds') ?? 8), connections: Number(argValue(args, '--connections') ?? 16) };
const rounds = Number(argValue(args, '--rounds') ?? 2);
ensureWrk();
const admin = postgres(dbUrl, { max: 1, onnotice: () => {} });
const dbName = new URL(dbUrl).pathname.slice(1);
await admin.unsafe(`ALTER DATABASE "${dbName}" SET track_functions = 'all'`);
const schema = `bench_cpu_${randomBytes(4).toString('hex')}`;
const project = await startCommons({ databaseUrl: dbUrl, env: { DATABASE_SCHEMA: schema, RATE_LIMITS: 'off' } });
Object.assign(process.env, { BENCH_DATABASE_URL: dbUrl, BENCH_SCHEMA: `${schema}_naive_search` });
const naive = args.includes('--project-only') ? null : await startRole('bench/lib/http-baselines.ts', 'naive-write-search');
try {
  const { token } = await register(`http://127.0.0.1:${project.port}`, 'CPU');
  const ph = { authorization: `Bearer ${token}` };
  const nh = { authorization: 'Bearer naive' };
  // Warm-up (JIT, caches), not counted.
  await measure(admin, 'warm', project, ph, { ...o, seconds: 2 }, false);
  if (naive) await measure(admin, 'warm', naive, nh, { ...o, seconds: 2 }, false);
  for (let i = 0; i < rounds; i++) {
    const s = await measure(admin, 'commons', project, ph, o, true);
    const { fns, ...row } = s;
    console.log(JSON.stringify(row));
    const top = [...(fns ?? [])].sort((a, b) => b[1].self - a[1].self);
    for (const [f, v] of top)
      console.log(
        `  ${f.padEnd(34)} calls/post ${v.calls.toFixed(3).padStart(7)}  self us/post ${(1000 * v.self).toFixed(1).padStart(7)}  total ${(1000 * v.total).toFixed(1).padStart(7)}`,
      );
    if (naive) console.log(JSON.stringify(await measure(admin, 'naive + search', naive, nh, o, false)));
  }
} finally {
  await project.stop();
  await naive?.stop();
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_naive_search" CASCADE`);
  await admin.end();
}
