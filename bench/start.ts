// Start: how soon a process started the way `npm start` starts it (its environment and node flags
// read from package.json, dist/main.js: the bundle `npm run build` writes) answers, on an existing data directory, and
// its resident memory at idle (the "first 200 within 1 s"), after its first start (a fresh
// data directory or schema: initialised, migrated) and after a restart on it (issue 47: <= 200 MB
// embedded, <= 100 MB on PostgreSQL). Each round starts each kind twice on a fresh data directory
// or schema: the first start, then the timed restart. Each start is timed from the
// spawn to the first 200 of GET /healthz and then of a real read (GET /api/v1/chat), both polled
// every 5 ms over fresh connections by this process (a shell loop of curl processes competes for
// the two cores and adds a few hundred milliseconds). Side by side, rounds alternated, the floor
// of the stack: a bare uWebSockets.js server and a Fastify server, one JavaScript file each, doing
// nothing but answer 200.
//   node --import tsx bench/start.ts [--rounds 5] [--settle-s 20] [--database-url postgres://...]
// Resident memory (VmRSS, MiB) is read 2 s after the first 200 and again after --settle-s seconds
// of idle; both are printed, and a goal "at idle" holds when both readings are under it (V8 may
// shrink its heap in between, or not: an idle server runs no collection of its own).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue, benchDatabaseUrl, median, rssBytes, sleep, startCommand } from './lib/procs.js';

interface Kind {
  name: string;
  args: string[];
  env: Record<string, string>;
  api: boolean;
  /** The environment of a fresh data directory or schema (one per round). */
  fresh?: () => Record<string, string>;
}

export interface StartRow {
  server: string;
  /** The first start on a fresh data directory or schema: first 200 of GET /api/v1/chat (or
   * /healthz) and resident memory at idle (2 s after it). */
  first_ms: number[];
  first_rss_mb: number[];
  /** The same process's resident memory after `settleS` seconds of idle. */
  first_settled_mb: number[];
  listening_ms: number[];
  healthz_ms: number[];
  api_ms: number[];
  rss_mb: number[];
  settled_mb: number[];
}

const BASELINES = new URL('./lib/start-baselines.mjs', import.meta.url).pathname;

function freePort(): Promise<number> {
  return new Promise((ok, ko) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
    s.on('error', ko);
  });
}

function get(port: number, path: string): Promise<number> {
  return new Promise((ok) => {
    const r = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => ok(res.statusCode ?? 0));
    });
    r.on('error', () => ok(0));
    r.end();
  });
}

async function until200(port: number, path: string, deadline: number): Promise<number> {
  for (;;) {
    if ((await get(port, path)) === 200) return performance.now();
    if (performance.now() > deadline) throw new Error(`no 200 from ${path} in time`);
    await sleep(5);
  }
}

/** Seconds of idle after which resident memory is read a second time: V8's memory reducer, which
 * shrinks the heap once allocation stops, has run by then (10-20 s after the last request here). */
let settleS = 20;

async function once(kind: Kind): Promise<{ listening: number; healthz: number; api: number; rss: number; settled: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, kind.args, {
    env: { ...process.env, ...kind.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let listening = Number.NaN;
  child.stdout?.on('data', (d: Buffer) => {
    if (Number.isNaN(listening) && d.toString().includes('listening')) listening = performance.now() - t0;
  });
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  try {
    const healthz = (await until200(port, '/healthz', t0 + 60_000)) - t0;
    const api = kind.api ? (await until200(port, '/api/v1/chat', t0 + 60_000)) - t0 : Number.NaN;
    await sleep(2000);
    const rss = rssBytes(child.pid as number) / 2 ** 20;
    await sleep(Math.max(0, settleS - 2) * 1000);
    const settled = rssBytes(child.pid as number) / 2 ** 20;
    return { listening, healthz, api, rss, settled };
  } finally {
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0 && child.signalCode !== 'SIGTERM') console.error(`${kind.name}: exited with ${code}`);
  }
}

/** Each round, each kind: a first start on a fresh data directory or schema, then a timed
 * restart on it; kinds alternated. */
export async function run(opts: { rounds?: number; databaseUrl?: string; settleS?: number } = {}): Promise<StartRow[]> {
  const rounds = opts.rounds ?? 5;
  settleS = opts.settleS ?? 20;
  const dirs: string[] = [];
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'commons-bench-start-'));
    dirs.push(dir);
    return { DATA_DIR: dir };
  };
  // The server started as `npm start` starts it: its environment and node flags (package.json).
  const start = startCommand();
  const base = { ...start.env, LOG_LEVEL: 'info', RATE_LIMITS: 'off', REDIS_URL: '' };
  const kinds: Kind[] = [
    {
      name: 'commons, embedded',
      args: [...start.nodeArgs, 'dist/main.js'],
      env: { ...base, DATABASE_URL: '' },
      api: true,
      fresh: freshDir,
    },
    ...(opts.databaseUrl
      ? [
          {
            name: 'commons, PostgreSQL',
            args: [...start.nodeArgs, 'dist/main.js'],
            env: { ...base, DATABASE_URL: opts.databaseUrl },
            api: true,
            fresh: () => ({ ...freshDir(), DATABASE_SCHEMA: `bench_start_${randomBytes(4).toString('hex')}` }),
          },
        ]
      : []),
    { name: 'bare uWS', args: [BASELINES, 'uws'], env: {}, api: false },
    { name: 'Fastify', args: [BASELINES, 'fastify'], env: {}, api: false },
  ];
  const rows = new Map<string, StartRow>(
    kinds.map((k) => [
      k.name,
      {
        server: k.name,
        first_ms: [],
        first_rss_mb: [],
        first_settled_mb: [],
        listening_ms: [],
        healthz_ms: [],
        api_ms: [],
        rss_mb: [],
        settled_mb: [],
      },
    ]),
  );
  try {
    for (let r = 0; r < rounds; r++) {
      for (const k of kinds) {
        const kind = { ...k, env: { ...k.env, ...(k.fresh?.() ?? {}) } };
        const row = rows.get(k.name) as StartRow;
        const first = await once(kind);
        row.first_ms.push(k.api ? first.api : first.healthz);
        row.first_rss_mb.push(first.rss);
        row.first_settled_mb.push(first.settled);
        const m = await once(kind);
        row.listening_ms.push(m.listening);
        row.healthz_ms.push(m.healthz);
        row.api_ms.push(m.api);
        row.rss_mb.push(m.rss);
        row.settled_mb.push(m.settled);
      }
    }
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  return [...rows.values()];
}

const span = (xs: number[], digits = 0) => {
  const ys = xs.filter((x) => !Number.isNaN(x));
  if (ys.length === 0) return '-';
  return `${median(ys).toFixed(digits)} (${Math.min(...ys).toFixed(digits)}-${Math.max(...ys).toFixed(digits)})`;
};

export function summarize(rows: StartRow[]): string {
  const lines = [
    `server | first start: first 200 ms | first start: resident MB 2 s / ${settleS} s after it | restart: listening ms | restart: first 200 /healthz ms | restart: first 200 GET /api/v1/chat ms | restart: resident MB 2 s / ${settleS} s after it (median, range)`,
  ];
  for (const r of rows)
    lines.push(
      `${r.server} | ${span(r.first_ms)} | ${span(r.first_rss_mb)} / ${span(r.first_settled_mb)} | ${span(r.listening_ms)} | ${span(r.healthz_ms)} | ${span(r.api_ms)} | ${span(r.rss_mb)} / ${span(r.settled_mb)}`,
    );
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const a = process.argv.slice(2);
  const rows = await run({
    rounds: Number(argValue(a, '--rounds') ?? 5),
    databaseUrl: benchDatabaseUrl(argValue(a, '--database-url')),
    settleS: Number(argValue(a, '--settle-s') ?? 20),
  });
  console.log(summarize(rows));
  process.exit(0);
}
