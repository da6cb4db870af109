// Write profile (not a test; issue 36): where one chat post's CPU goes in all three processes, the
// server, PostgreSQL and the load generator, for the project and the naive-with-search server side
// by side. Each runs POST /api/v1/chat under wrk (c connections, s seconds) while `perf record -a`
// samples every CPU of the machine (cpu-clock, 999 Hz); the samples are split by process (server,
// PostgreSQL's backends and its background processes, wrk, the rest) and within each into kernel
// and user time, and each process's top symbols are listed (the server's JavaScript by name, from
// node's --perf-basic-prof map). Every figure is also given as CPU microseconds per post, so what
// a post costs each process reads directly, and how far the machine's cores were used.
//   node --import tsx bench/write-profile.ts [--seconds 8] [--connections 16] [--database-url postgres://...]
// Needs `perf` (Debian: linux-perf) and kernel.perf_event_paranoid <= 2 with cpu-clock (as root here).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { ensureWrk, runWrk, type WrkResult } from './lib/http-wrk.js';
import { argValue, benchDatabaseUrl, type Proc, startCommons, startRole, table } from './lib/procs.js';
import { register } from './lib/task-moves.js';
import { BODY } from './lib/write-measure.js';

/** perf's sampling rate: each sample is 1/HZ s of one CPU. */
const HZ = 999;

export interface ProcessShare {
  process: string;
  cores: number;
  kernel_share: number;
  us_per_post: number;
  top: string;
}

export interface WriteProfile {
  server: string;
  connections: number;
  rps: number;
  p99_ms: number;
  cores_used: number;
  processes: ProcessShare[];
}

/** Which of the three a sample belongs to: the server by its process id (its every thread),
 * PostgreSQL and wrk by their command; whatever else ran on the machine is `other`. */
function owner(s: { comm: string; pid: number }, serverPid: number): string {
  if (s.pid === serverPid) return 'server (node)';
  if (s.comm === 'postgres') return 'PostgreSQL';
  if (s.comm === 'wrk') return 'wrk (load)';
  if (s.pid === 0) return 'idle';
  return 'other';
}

/** perf's samples as rows: command, process id, kernel or not, symbol. */
function samples(data: string): { comm: string; pid: number; kernel: boolean; sym: string }[] {
  const out = execFileSync('perf', ['script', '-i', data, '-F', 'comm,pid,ip,sym,dso', '--no-demangle'], {
    maxBuffer: 1 << 30,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const rows: { comm: string; pid: number; kernel: boolean; sym: string }[] = [];
  for (const line of out.split('\n')) {
    const m = /^\s*(.+?)\s+(\d+)\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$/.exec(line);
    if (!m) continue;
    const [, comm = '', pid = '0', , sym = '', dso = ''] = m;
    rows.push({
      comm: comm.trim(),
      pid: Number(pid),
      kernel: dso.includes('kernel'),
      sym: sym.replace(/\+0x[0-9a-f]+$/, '') || `[${dso}]`,
    });
  }
  return rows;
}

async function profile(
  name: string,
  url: string,
  headers: Record<string, string>,
  pid: number,
  o: { seconds: number; connections: number },
) {
  const dir = mkdtempSync(join(tmpdir(), 'commons-perf-'));
  const data = join(dir, 'perf.data');
  const perf = spawn('perf', ['record', '-a', '-F', String(HZ), '-e', 'cpu-clock', '-o', data, '--', 'sleep', String(o.seconds + 1)], {
    stdio: 'ignore',
  });
  const r: WrkResult = await runWrk({
    url: `${url}/api/v1/chat`,
    seconds: o.seconds,
    connections: o.connections,
    method: 'POST',
    body: BODY,
    headers: { 'content-type': 'application/json', ...headers },
    serverPid: pid,
    database: true,
  });
  await new Promise((ok) => perf.once('exit', ok));
  const rows = samples(data);
  rmSync(dir, { recursive: true, force: true });
  const window = o.seconds + 1;
  const posts = r.rps * o.seconds;
  const by = new Map<string, { n: number; kernel: number; syms: Map<string, number> }>();
  for (const s of rows) {
    const k = owner(s, pid);
    const e = by.get(k) ?? { n: 0, kernel: 0, syms: new Map() };
    e.n++;
    if (s.kernel) e.kernel++;
    e.syms.set(s.sym, (e.syms.get(s.sym) ?? 0) + 1);
    by.set(k, e);
  }
  const processes: ProcessShare[] = [...by]
    .filter(([k]) => k !== 'idle')
    .sort((a, b) => b[1].n - a[1].n)
    .map(([process, e]) => {
      const cores = e.n / HZ / window;
      return {
        process,
        cores: Number(cores.toFixed(2)),
        kernel_share: Number((e.kernel / e.n).toFixed(2)),
        us_per_post: Number(((1e6 * e.n) / HZ / posts).toFixed(1)),
        top: [...e.syms]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 6)
          .map(([sym, n]) => `${sym.slice(0, 48)} ${((100 * n) / e.n).toFixed(0)}%`)
          .join('; '),
      };
    });
  const used = processes.reduce((a, p) => a + p.cores, 0);
  return { server: name, connections: o.connections, rps: r.rps, p99_ms: r.p99_ms, cores_used: Number(used.toFixed(2)), processes };
}

export async function run(opts: { seconds?: number; connections?: number; databaseUrl?: string } = {}): Promise<WriteProfile[]> {
  ensureWrk();
  if (!existsSync('/usr/bin/perf')) throw new Error('bench: perf is needed (Debian: apt-get install -y linux-perf)');
  const o = { seconds: opts.seconds ?? 8, connections: opts.connections ?? 16 };
  const url = benchDatabaseUrl(opts.databaseUrl);
  const schema = `bench_prof_${randomBytes(4).toString('hex')}`;
  const project: Proc = await startCommons({ databaseUrl: url, env: { DATABASE_SCHEMA: schema }, nodeArgs: ['--perf-basic-prof'] });
  Object.assign(process.env, { BENCH_DATABASE_URL: url, BENCH_SCHEMA: `${schema}_naive_search` });
  const naive: Proc = await startRole('bench/lib/http-baselines.ts', 'naive-write-search', ['--perf-basic-prof']);
  const out: WriteProfile[] = [];
  try {
    const base = `http://127.0.0.1:${project.port}`;
    const { token } = await register(base, 'Profile');
    // A short warm-up of each (JIT, caches, the first pages), not profiled.
    await runWrk({
      url: `${base}/api/v1/chat`,
      seconds: 2,
      connections: o.connections,
      method: 'POST',
      body: BODY,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      serverPid: project.pid,
    });
    await runWrk({
      url: `http://127.0.0.1:${naive.port}/api/v1/chat`,
      seconds: 2,
      connections: o.connections,
      method: 'POST',
      body: BODY,
      headers: { 'content-type': 'application/json', authorization: 'Bearer naive' },
      serverPid: naive.pid,
    });
    out.push(await profile('commons (postgres)', base, { authorization: `Bearer ${token}` }, project.pid, o));
    out.push(await profile('naive + search', `http://127.0.0.1:${naive.port}`, { authorization: 'Bearer naive' }, naive.pid, o));
  } finally {
    await project.stop();
    await naive.stop();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_naive_search" CASCADE`);
    await sql.end();
  }
  return out;
}

export function print(rows: WriteProfile[]): void {
  for (const r of rows) {
    console.log(
      `\n${r.server}, c=${r.connections}: ${Math.round(r.rps)} posts/s, p99 ${r.p99_ms} ms, ${r.cores_used} of ${cpus().length} cores used`,
    );
    console.log(table(r.processes as unknown as Record<string, unknown>[]));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const rows = await run({
    seconds: Number(argValue(args, '--seconds') ?? 8),
    connections: Number(argValue(args, '--connections') ?? 16),
    databaseUrl: argValue(args, '--database-url'),
  });
  print(rows);
}
