// Read CPU side by side (not a test): the anonymous GET /api/v1/chat (50 messages) on the project
// built in one or more dist directories (e.g. a "before" copy and the current dist/) and on the
// lean contract baseline (bench/lib/http-baselines.ts uws-contract-lean), in alternating rounds,
// each server in its own process; per server the CPU per request (/proc, over the run) is what it
// reports: robust on a shared machine where req/s is noisy.
// Run: node --import tsx bench/read-cpu.ts [--seconds 5] [--rounds 4] [--connections 32]
//        [--dist dist-before,dist] [--prof DIR] (each server under --cpu-prof, profiles in DIR)
//        [--node-args '--perf-basic-prof'] (more node flags for every server)
//        [--hold] (print the servers' pids and ports and wait for Ctrl-C before measuring)
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureWrk, runWrk } from './lib/http-wrk.js';
import { argValue, type Proc, postJson, startCommons, startRole } from './lib/procs.js';

const args = process.argv.slice(2);
const seconds = Number(argValue(args, '--seconds') ?? 5);
const rounds = Number(argValue(args, '--rounds') ?? 4);
const connections = Number(argValue(args, '--connections') ?? 32);
const dists = (argValue(args, '--dist') ?? 'dist').split(',');
const prof = argValue(args, '--prof');
const extra = (argValue(args, '--node-args') ?? '').split(' ').filter(Boolean);
const profArgs = (name: string) => [...extra, ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${join(prof, name)}`] : [])];

/** The project from `dist` as `npm start` runs it (embedded store, rate limits off). */
function startFrom(spec: string): Promise<Proc> {
  // `dist:NAME=value:NAME2=:--flag=x`: variables set (an empty value: unset) in this server's
  // environment and node flags after package.json's, e.g. `dist:MALLOC_ARENA_MAX=` to try it
  // without package.json's setting, `dist:--max-semi-space-size=16` with another young generation.
  const [dist, ...parts] = spec.split(':') as [string, ...string[]];
  const vars = parts.filter((p) => !p.startsWith('--')).map((kv) => kv.split('=') as [string, string]);
  return startCommons({
    dist,
    env: { LOG_LEVEL: 'info', ...Object.fromEntries(vars.filter(([, v]) => v !== '')) },
    unset: vars.filter(([, v]) => v === '').map(([k]) => k),
    nodeArgs: [...parts.filter((p) => p.startsWith('--')), ...profArgs(spec.replace(/[:=]/g, '_'))],
  });
}

ensureWrk();
const servers: { name: string; p: Proc }[] = [];
try {
  for (const d of dists) {
    const p = await startFrom(d);
    const url = `http://127.0.0.1:${p.port}`;
    const token = (await postJson(url, '/api/v1/ai/register', { name: 'Reader', accepted_principles: true })).data.api_token as string;
    for (let i = 0; i < 50; i++) await postJson(url, '/api/v1/chat', { body: `message ${i} `.padEnd(170, 'x') }, token);
    servers.push({ name: d, p });
    if (servers.length === 1) {
      const answer = await fetch(`${url}/api/v1/chat`);
      const file = join(tmpdir(), `commons-readcpu-page-${process.pid}.json`);
      writeFileSync(file, Buffer.from(await answer.arrayBuffer()));
      process.env.BENCH_BODY_FILE = file;
      const own = new Set(['date', 'uwebsockets', 'content-length', 'x-request-id']);
      const headersFile = join(tmpdir(), `commons-readcpu-headers-${process.pid}.json`);
      writeFileSync(headersFile, JSON.stringify([...answer.headers].filter(([k]) => !own.has(k))));
      process.env.BENCH_HEADERS_FILE = headersFile;
    }
  }
  servers.push({ name: 'lean baseline', p: await startRole('bench/lib/http-baselines.ts', 'uws-contract-lean', profArgs('lean')) });
  if (args.includes('--hold')) {
    // Servers left up for a manual look (wrk, strace, perf): their pids and ports, until Ctrl-C.
    for (const s of servers) console.log(`${s.name} pid ${s.p.pid} port ${s.p.port}`);
    await new Promise<void>((ok) => process.once('SIGINT', () => ok()));
  }
  const got = new Map<string, { us: number[]; rps: number[] }>();
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const s of order) {
      const r = await runWrk({ url: `http://127.0.0.1:${s.p.port}/api/v1/chat`, seconds, connections, serverPid: s.p.pid });
      if (r.errors) throw new Error(`${s.name}: ${r.errors} errors`);
      const g = got.get(s.name) ?? { us: [], rps: [] };
      g.us.push(1e6 / r.per_cpu_s);
      g.rps.push(r.rps);
      got.set(s.name, g);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const lean = median(got.get('lean baseline')?.us ?? [1]);
  for (const [name, g] of got) {
    const us = median(g.us);
    console.log(
      `${name.padEnd(16)} CPU us/request median ${us.toFixed(2)} (${g.us.map((x) => x.toFixed(2)).join(' ')})  ` +
        `req/s median ${median(g.rps)}  lean/this ${(lean / us).toFixed(3)}`,
    );
  }
} finally {
  for (const s of servers) await s.p.stop();
}
