// The HTTP load generator for the read and write suites: wrk (C, event-driven, far cheaper per
// request than any Node client), one thread, with a Lua script that sets the request and prints a
// JSON summary. The client's and the server's CPU are sampled from /proc so a run can be flagged
// client-bound when wrk, not the server, was the limit.
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, postgresCores, postgresCpu } from './procs.js';

export interface Row {
  suite: string;
  server: string;
  scenario: string;
  rps: number;
  /** The requests answered and the time they took (s), when known: rps is their quotient. */
  requests?: number;
  seconds?: number;
  p50_ms: number;
  p99_ms: number;
  /** Server CPU in cores during the run (1 = one core busy all along). */
  server_cpu: number;
  client_cpu: number;
  client_bound: boolean;
  /** Requests per CPU-second of the server: comparable across runs when other load starves it. */
  per_cpu_s: number;
  errors: number;
  ratio?: Record<string, number>;
  /** PostgreSQL's CPU in cores during the run, all its processes and its busiest one (when asked). */
  db_cpu?: number;
  db_busiest?: number;
  /** The project's chat: its indexer's lag over the run's posts (commons_chat_index_lag_seconds,
   * bucket upper bounds), and how long the backlog took to drain after the run. */
  index_lag?: { p50_ms: number; p99_ms: number; max_ms: number; drain_ms: number; messages: number };
}

export function ensureWrk(): void {
  if (spawnSync('wrk', ['--version']).error === undefined) return;
  console.error('bench: wrk is not installed; installing the Debian package `wrk` (apt-get install -y wrk)...');
  const r = spawnSync('sh', ['-c', 'apt-get install -y wrk || (apt-get update && apt-get install -y wrk)'], { stdio: 'inherit' });
  if (r.status !== 0 || spawnSync('wrk', ['--version']).error !== undefined) {
    throw new Error('bench: wrk is needed (Debian: apt-get install -y wrk) and could not be installed');
  }
}

const LUA = `
local body_file, method, hdrs = nil, "GET", {}
function init(args)
  method = args[1] or "GET"
  if args[2] and args[2] ~= "" then local f = io.open(args[2], "rb"); wrk.body = f:read("*a"); f:close() end
  for i = 5, #args do local k, v = args[i]:match("^([^:]+):%s*(.*)$"); if k then wrk.headers[k] = v end end
  wrk.method = method
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nRESULT {"requests":%d,"duration_us":%d,"errors":%d,"status_errors":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
`;

// A list of requests, each sent once in order (path and Authorization per line, tab-separated; the
// file's path is the script's fourth argument): each task can be moved only once, so a move is
// measured over a list of distinct tasks. The thread stops when the list is spent (or at the
// duration). Its own file: a script with request() builds every request in Lua, which a fixed
// request does not pay.
const LIST_LUA = `${LUA}
local lines, sent, answered = {}, 0, 0
local base_init = init
function init(args)
  base_init(args)
  for l in io.lines(args[4]) do
    local p, a = l:match("^([^\t]*)\t(.*)$")
    if p then lines[#lines + 1] = { p, a } end
  end
end
local function spent()
  -- wrk's own duration is the whole -d even when the list ends early: tell the parent when.
  io.write("LIST-SPENT\\n")
  io.flush()
  wrk.thread:stop()
end
function request()
  sent = sent + 1
  if sent > #lines then
    spent()
    sent = #lines
  end
  local l = lines[sent]
  wrk.headers["Authorization"] = l[2]
  return wrk.format(nil, l[1])
end
function response()
  answered = answered + 1
  if answered == #lines then spent() end
end
`;

/** The script, with a per-connection pause between requests when pacing (wrk calls delay()). */
function luaFile(delayMs: number, list: boolean): string {
  const path = join(tmpdir(), `commons-bench-${process.pid}-${delayMs}${list ? '-list' : ''}.lua`);
  const base = list ? LIST_LUA : LUA;
  writeFileSync(path, delayMs > 0 ? `${base}\nfunction delay() return ${delayMs} end\n` : base);
  return path;
}

export interface WrkOptions {
  url: string;
  seconds: number;
  connections: number;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** The server's process id, for its CPU figure. */
  serverPid: number;
  /** Paced load: each connection pauses this long between requests (0: as fast as answers come). */
  delayMs?: number;
  /** Each request once, in order, instead of one request repeated: its path (on `url`'s origin)
   * and Authorization header. The run ends when the list is spent or at `seconds`; a list spent
   * early is timed to its last answer (rps = the list's requests over that time). */
  list?: { path: string; authorization: string }[];
  /** Also measure PostgreSQL's CPU (the server's database is this machine's PostgreSQL). */
  database?: boolean;
}

export interface WrkResult {
  rps: number;
  /** The requests answered and the time they took (s): rps is their quotient. */
  requests?: number;
  seconds?: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  server_cpu: number;
  client_cpu: number;
  client_bound: boolean;
  per_cpu_s: number;
  db_cpu?: number;
  db_busiest?: number;
}

export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const luaPath = luaFile(o.delayMs ?? 0, o.list !== undefined);
  let listPath = '';
  if (o.list) {
    listPath = join(tmpdir(), `commons-bench-list-${process.pid}.tsv`);
    writeFileSync(listPath, o.list.map((r) => `${r.path}\t${r.authorization}\n`).join(''));
  }
  let bodyPath = '';
  if (o.body !== undefined) {
    bodyPath = join(tmpdir(), `commons-bench-body-${process.pid}.json`);
    writeFileSync(bodyPath, o.body);
  }
  const hdrs = Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}`);
  const args = [
    '-t1',
    `-c${o.connections}`,
    `-d${o.seconds}s`,
    '--timeout',
    '5s',
    '-s',
    luaPath,
    o.url,
    '--',
    o.method ?? 'GET',
    bodyPath,
    String(o.delayMs ?? 0),
    listPath,
    ...hdrs,
  ];
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let spentAt = 0;
  child.stdout.on('data', (d) => {
    out += d;
    if (!spentAt && out.includes('LIST-SPENT')) {
      spentAt = performance.now();
      // wrk would wait out its whole -d: interrupted, it stops and reports (its done() runs).
      child.kill('SIGINT');
    }
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const db0 = o.database ? postgresCpu() : null;
  const s0 = cpuSeconds(o.serverPid);
  const t0 = performance.now();
  // Sample the client's CPU just before it ends: once it has exited /proc no longer has it.
  let c1 = 0;
  let s1 = s0;
  let t1 = t0;
  const timer = setInterval(() => {
    const c = cpuSeconds(child.pid as number);
    if (!Number.isNaN(c)) {
      c1 = c;
      s1 = cpuSeconds(o.serverPid);
      t1 = performance.now();
    }
  }, 100);
  const code = await new Promise<number | null>((ok) => child.on('exit', ok));
  clearInterval(timer);
  const m = /RESULT (\{.*\})/.exec(out);
  if (code !== 0 || !m) throw new Error(`wrk failed (${code}): ${out.slice(-500)}`);
  const r = JSON.parse(m[1] as string) as {
    requests: number;
    duration_us: number;
    errors: number;
    status_errors: number;
    p50_us: number;
    p99_us: number;
  };
  // A list spent before the duration: the requests took until then (wrk still waits out -d).
  if (spentAt) r.duration_us = Math.min(r.duration_us, (spentAt - t0) * 1000);
  const wall = (t1 - t0) / 1000;
  // The database idles once wrk has stopped, so sampling it after the exit adds nothing but
  // time, which wrk's own duration leaves out.
  const db = db0 ? postgresCores(db0, postgresCpu(), r.duration_us / 1e6) : {};
  const clientCpu = wall > 0 ? c1 / wall : 0;
  return {
    rps: Math.round(r.requests / (r.duration_us / 1e6)),
    requests: r.requests,
    seconds: r.duration_us / 1e6,
    p50_ms: r.p50_us / 1000,
    p99_ms: r.p99_us / 1000,
    errors: r.errors + r.status_errors,
    server_cpu: wall > 0 ? (s1 - s0) / wall : 0,
    client_cpu: clientCpu,
    // One wrk thread: near a full core means the generator, not the server, set the pace.
    client_bound: clientCpu > 0.9,
    per_cpu_s: s1 > s0 ? Math.round(r.requests / (s1 - s0)) : 0,
    ...db,
  };
}

export function printTable(rows: Row[]): void {
  const fmt = (r: Row) =>
    [
      r.suite.padEnd(10),
      r.server.padEnd(22),
      r.scenario.padEnd(26),
      String(r.rps).padStart(8),
      r.p50_ms.toFixed(2).padStart(8),
      r.p99_ms.toFixed(2).padStart(8),
      r.server_cpu.toFixed(2).padStart(6),
      r.client_cpu.toFixed(2).padStart(6),
      String(r.per_cpu_s).padStart(8),
      r.client_bound ? ' CLIENT-BOUND' : '',
      r.errors ? ` errors=${r.errors}` : '',
      r.db_cpu !== undefined ? ` dbCPU=${r.db_cpu.toFixed(2)} (busiest ${(r.db_busiest ?? 0).toFixed(2)})` : '',
      r.index_lag
        ? ` indexLag p50<=${r.index_lag.p50_ms}ms p99<=${r.index_lag.p99_ms}ms max<=${r.index_lag.max_ms}ms drain=${r.index_lag.drain_ms}ms`
        : '',
      r.ratio
        ? ` ${Object.entries(r.ratio)
            .map(([k, v]) => `${k}=${v.toFixed(2)}x`)
            .join(' ')}`
        : '',
    ].join(' ');
  console.log(
    `${'suite'.padEnd(10)} ${'server'.padEnd(22)} ${'scenario'.padEnd(26)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'srvCPU'.padStart(6)} ${'wrkCPU'.padStart(6)} ${'req/CPUs'.padStart(8)}`,
  );
  for (const r of rows) console.log(fmt(r));
}

/** Median of the per-round figures of one (server, scenario), keeping the round with that rps. */
export function medianRow(rows: Row[]): Row {
  const sorted = [...rows].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor(sorted.length / 2)] as Row;
}
