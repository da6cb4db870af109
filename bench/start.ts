// Start: how soon a process started the way `npm start` starts it (node --enable-source-maps
// dist/main.js, the bundle `npm run build` writes) answers, on an existing data directory, and
// its resident memory at idle (the "first 200 within 1 s"). Each start is timed from the
// spawn to the first 200 of GET /healthz and then of a real read (GET /api/v1/chat), both polled
// every 5 ms over fresh connections by this process (a shell loop of curl processes competes for
// the two cores and adds a few hundred milliseconds). Side by side, rounds alternated, the floor
// of the stack: a bare uWebSockets.js server and a Fastify server, one JavaScript file each, doing
// nothing but answer 200.
//   node --import tsx bench/start.ts [--rounds 5] [--database-url postgres://...]
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue, benchDatabaseUrl, median, rssBytes, sleep } from './lib/procs.js';

interface Kind {
  name: string;
  args: string[];
  env: Record<string, string>;
  api: boolean;
}

export interface StartRow {
  server: string;
  listening_ms: number[];
  healthz_ms: number[];
  api_ms: number[];
  rss_mb: number[];
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

async function once(kind: Kind): Promise<{ listening: number; healthz: number; api: number; rss: number }> {
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
    return { listening, healthz, api, rss };
  } finally {
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0 && child.signalCode !== 'SIGTERM') console.error(`${kind.name}: exited with ${code}`);
  }
}

/** Starts each kind once (so data directories and schemas exist), then `rounds` timed starts each, alternated. */
export async function run(opts: { rounds?: number; databaseUrl?: string } = {}): Promise<StartRow[]> {
  const rounds = opts.rounds ?? 5;
  const dataDir = mkdtempSync(join(tmpdir(), 'commons-bench-start-'));
  const base = { LOG_LEVEL: 'info', RATE_LIMITS: 'off', REDIS_URL: '' };
  const kinds: Kind[] = [
    {
      name: 'commons, embedded',
      args: ['--enable-source-maps', 'dist/main.js'],
      env: { ...base, DATA_DIR: dataDir, DATABASE_URL: '' },
      api: true,
    },
    ...(opts.databaseUrl
      ? [
          {
            name: 'commons, PostgreSQL',
            args: ['--enable-source-maps', 'dist/main.js'],
            env: { ...base, DATABASE_URL: opts.databaseUrl, DATABASE_SCHEMA: `bench_start_${randomBytes(4).toString('hex')}` },
            api: true,
          },
        ]
      : []),
    { name: 'bare uWS', args: [BASELINES, 'uws'], env: {}, api: false },
    { name: 'Fastify', args: [BASELINES, 'fastify'], env: {}, api: false },
  ];
  const rows = new Map<string, StartRow>(
    kinds.map((k) => [k.name, { server: k.name, listening_ms: [], healthz_ms: [], api_ms: [], rss_mb: [] }]),
  );
  try {
    for (const k of kinds) await once(k); // first start: initialises the data directory or schema
    for (let r = 0; r < rounds; r++) {
      for (const k of kinds) {
        const m = await once(k);
        const row = rows.get(k.name) as StartRow;
        row.listening_ms.push(m.listening);
        row.healthz_ms.push(m.healthz);
        row.api_ms.push(m.api);
        row.rss_mb.push(m.rss);
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return [...rows.values()];
}

const span = (xs: number[], digits = 0) => {
  const ys = xs.filter((x) => !Number.isNaN(x));
  if (ys.length === 0) return '-';
  return `${median(ys).toFixed(digits)} (${Math.min(...ys).toFixed(digits)}-${Math.max(...ys).toFixed(digits)})`;
};

export function summarize(rows: StartRow[]): string {
  const lines = ['server | listening ms | first 200 /healthz ms | first 200 GET /api/v1/chat ms | resident MB at idle (median, range)'];
  for (const r of rows) lines.push(`${r.server} | ${span(r.listening_ms)} | ${span(r.healthz_ms)} | ${span(r.api_ms)} | ${span(r.rss_mb)}`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const a = process.argv.slice(2);
  const rows = await run({ rounds: Number(argValue(a, '--rounds') ?? 5), databaseUrl: benchDatabaseUrl(argValue(a, '--database-url')) });
  console.log(summarize(rows));
  process.exit(0);
}
