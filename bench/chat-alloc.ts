// The node's cost per chat post (not a test; issue 47): POST /api/v1/chat under wrk against one or
// more builds of the server started side by side, measured inside each server process over the
// same windows, alternating: bytes the JavaScript heap allocated per post (v8.GCProfiler: the used
// heap's growth plus what the collections freed; bench/lib/alloc-probe.mjs), collections per 10,000
// posts and their time, and the process's CPU per post. Allocation per post does not move with the
// machine's load; CPU per post does less than a rate.
//   node --import tsx bench/chat-alloc.ts --database-url postgres://root@127.0.0.1:5432/mine
//       [--dists dist,../before/dist,dist:--max-semi-space-size=16] [--connections 256] [--seconds 5] [--rounds 3]
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import postgres from 'postgres';
import { ensureWrk, runWrk } from './lib/http-wrk.js';
import { argValue, type Proc, startCommons } from './lib/procs.js';
import { register } from './lib/task-moves.js';
import { BODY } from './lib/write-measure.js';

const args = process.argv.slice(2);
const dbUrl = argValue(args, '--database-url');
if (!dbUrl) throw new Error('--database-url of a database of your own is needed');
const dists = (argValue(args, '--dists') ?? 'dist').split(',');
const seconds = Number(argValue(args, '--seconds') ?? 5);
const connections = Number(argValue(args, '--connections') ?? 256);
const rounds = Number(argValue(args, '--rounds') ?? 3);
const probe = resolve('bench/lib/alloc-probe.mjs');
ensureWrk();

interface Server {
  dist: string;
  proc: Proc;
  out: string;
  headers: Record<string, string>;
  schema: string;
}

const servers: Server[] = [];
// A variant is `dist[:node flag[:node flag...]]`, e.g. `dist:--max-semi-space-size=16`.
for (const variant of dists) {
  const [dist = 'dist', ...flags] = variant.split(':');
  const out = join(tmpdir(), `commons-alloc-${process.pid}-${servers.length}.json`);
  const schema = `bench_alloc_${randomBytes(4).toString('hex')}`;
  const proc = await startCommons({
    databaseUrl: dbUrl,
    dist,
    nodeArgs: [...flags, '--import', probe],
    env: { DATABASE_SCHEMA: schema, RATE_LIMITS: 'off', ALLOC_PROBE_OUT: out },
  });
  const { token } = await register(`http://127.0.0.1:${proc.port}`, 'Alloc');
  servers.push({ dist: variant, proc, out, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, schema });
}

async function window(s: Server, secs: number) {
  process.kill(s.proc.pid, 'SIGUSR2');
  const r = await runWrk({
    url: `http://127.0.0.1:${s.proc.port}/api/v1/chat`,
    seconds: secs,
    connections,
    method: 'POST',
    body: BODY,
    headers: s.headers,
    serverPid: s.proc.pid,
  });
  // The indexer's step for the last posts (its linger is 25 ms) falls inside the window.
  await new Promise((ok) => setTimeout(ok, 400));
  rmSync(s.out, { force: true });
  process.kill(s.proc.pid, 'SIGUSR2');
  let m: { allocated: number; gcs: number; gcUs: number; cpuUs: number; byType: unknown } | undefined;
  while (!m) {
    await new Promise((ok) => setTimeout(ok, 50));
    try {
      m = JSON.parse(readFileSync(s.out, 'utf8'));
    } catch {}
  }
  const posts = r.requests ?? r.rps * secs;
  return {
    dist: s.dist,
    rps: Math.round(r.rps),
    posts,
    errors: r.errors,
    bytes_per_post: Math.round(m.allocated / posts),
    gcs_per_10k: Number(((1e4 * m.gcs) / posts).toFixed(1)),
    gc_us_per_post: Number((m.gcUs / posts).toFixed(1)),
    cpu_us_per_post: Number((m.cpuUs / posts).toFixed(1)),
    gc_by_type: m.byType,
    load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  };
}

const admin = postgres(dbUrl, { max: 1, onnotice: () => {} });
try {
  for (const s of servers) await window(s, 2); // warm-up: JIT, caches
  for (let i = 0; i < rounds; i++)
    for (const s of i % 2 ? [...servers].reverse() : servers) console.log(JSON.stringify(await window(s, seconds)));
} finally {
  for (const s of servers) {
    await s.proc.stop();
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${s.schema}" CASCADE`);
  }
  await admin.end();
}
