// Process plumbing shared by the benchmarks: start the Commons server from dist/ (as `npm start`
// does), fork a role script, ask a child over IPC, read a process's CPU time and resident memory.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Proc {
  pid: number;
  port: number;
  stop(): Promise<void>;
}

export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** The value after `flag` in `args`, if the flag is there. */
export const argValue = (args: string[], flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};

/** The PostgreSQL the suites run on: the one given, else BENCH_DATABASE_URL, else the local server. */
export const benchDatabaseUrl = (given?: string): string =>
  given ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const now = () => performance.timeOrigin + performance.now();

export function ask<T>(c: ChildProcess, msg: object, key: string): Promise<T> {
  return new Promise<T>((ok) => {
    const h = (m: Record<string, unknown>) => {
      if (key in m) {
        c.off('message', h);
        ok(m as T);
      }
    };
    c.on('message', h);
    c.send(msg);
  });
}

function exited(c: ChildProcess): Promise<void> {
  return c.exitCode !== null ? Promise.resolve() : new Promise((ok) => c.once('exit', () => ok()));
}

/** SIGTERM, then SIGKILL if the process has not exited within `graceMs`. */
async function stopChild(c: ChildProcess, graceMs: number): Promise<void> {
  c.kill('SIGTERM');
  await Promise.race([exited(c), sleep(graceMs)]);
  if (c.exitCode === null) c.kill('SIGKILL');
}

/** The environment and node flags `npm start` gives the server, read from package.json's "start"
 * (`exec env NAME=value ... node FLAGS dist/main.js`), so the benches start it the same way. */
export function startCommand(): { env: Record<string, string>; nodeArgs: string[] } {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.trim().split(/\s+/);
  const env: Record<string, string> = {};
  let i = words[0] === 'exec' ? 1 : 0;
  if (words[i] === 'env') i++;
  for (; i < words.length && /^\w+=/.test(words[i] as string); i++) {
    const [name, ...value] = (words[i] as string).split('=');
    env[name as string] = value.join('=');
  }
  const main = words.indexOf('dist/main.js');
  if (words[i] !== 'node' || main < i)
    throw new Error(`package.json "start" is not \`[exec] [env NAME=value...] node FLAGS dist/main.js\`: ${pkg.scripts.start}`);
  return { env, nodeArgs: words.slice(i + 1, main) };
}

/** The Commons server as `npm start` runs it (node dist/main.js), on the embedded default unless
 * `databaseUrl` is given (then in a schema of its own). Rate limits off: the bench measures the path. */
export async function startCommons(
  opts: {
    databaseUrl?: string;
    env?: Record<string, string>;
    nodeArgs?: string[];
    /** The build to run (default dist/, e.g. a "before" copy beside it). */
    dist?: string;
    /** Variables left out of the server's environment (e.g. one package.json's start line sets). */
    unset?: string[];
  } = {},
): Promise<Proc> {
  const dist = opts.dist ?? 'dist';
  if (!existsSync(`${dist}/main.js`)) throw new Error(`${dist}/main.js is missing: run \`npm run build\` first`);
  const dir = mkdtempSync(join(tmpdir(), 'commons-bench-'));
  const start = startCommand();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...start.env,
    PORT: '0',
    DATA_DIR: dir,
    RATE_LIMITS: 'off',
    LOG_LEVEL: 'info',
    REDIS_URL: '',
    DATABASE_URL: opts.databaseUrl ?? '',
    ...(opts.databaseUrl ? { DATABASE_SCHEMA: `bench_${randomBytes(4).toString('hex')}` } : {}),
    ...opts.env,
  };
  // COMMONS_NODE_ARGS adds node flags to the server, e.g. `--cpu-prof --cpu-prof-dir=prof` to profile it.
  const nodeArgs = [...(process.env.COMMONS_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(opts.nodeArgs ?? [])];
  // The flags `npm start` gives (package.json).
  for (const name of opts.unset ?? []) delete env[name];
  const child = spawn(process.execPath, [...start.nodeArgs, ...nodeArgs, `${dist}/main.js`], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((ok, ko) => {
    let out = '';
    child.once('exit', (code) => ko(new Error(`commons exited with ${code}: ${out}`)));
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(out);
      if (m) ok(Number(m[1]));
    });
  });
  return {
    pid: child.pid as number,
    port,
    async stop() {
      await stopChild(child, 10_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Forks a bench role (a TypeScript file under bench/lib) that reports `{port}` when listening. */
export async function startRole(file: string, role: string, nodeArgs: string[] = []): Promise<Proc> {
  const child = fork(file, [role], { execArgv: ['--import', 'tsx', ...nodeArgs], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await ask<{ port: number }>(child, {}, 'port');
  return {
    pid: child.pid as number,
    port,
    stop: () => stopChild(child, 5000),
  };
}

/** CPU seconds (user + system) a process has used so far (Linux /proc), or NaN when it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds used so far by each PostgreSQL process of this machine (postmaster, backends,
 * WAL writer...), by process id. The bench is the only user of the database while it runs. */
export function postgresCpu(): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let comm = '';
    try {
      comm = readFileSync(`/proc/${d}/comm`, 'utf8');
    } catch {
      continue;
    }
    if (comm.trim() !== 'postgres') continue;
    const s = cpuSeconds(Number(d));
    if (!Number.isNaN(s)) out.set(Number(d), s);
  }
  return out;
}

/** Cores PostgreSQL used between two `postgresCpu` samples `seconds` apart: all its processes,
 * and its busiest one (a backend near 1 is a statement stream that cannot go faster on one core). */
export function postgresCores(before: Map<number, number>, after: Map<number, number>, seconds: number) {
  let total = 0;
  let busiest = 0;
  for (const [pid, s] of after) {
    const used = s - (before.get(pid) ?? 0);
    total += used;
    busiest = Math.max(busiest, used);
  }
  return { db_cpu: total / seconds, db_busiest: busiest / seconds };
}

/** Node flags that let `settledRss` ask a server for full collections (bench/lib/gc-on-signal.cjs). */
export const GC_ON_SIGNAL = ['--expose-gc', '--require', new URL('./gc-on-signal.cjs', import.meta.url).pathname];

/** Resident memory after the process (started with GC_ON_SIGNAL) has collected its garbage. */
export async function settledRss(pid: number): Promise<number> {
  process.kill(pid, 'SIGUSR2');
  await sleep(500);
  return rssBytes(pid);
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

export const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

export const median = (xs: number[]): number => pct(xs, 50);

/** Prints rows as an aligned table. */
export function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '(no rows)';
  const cols = Object.keys(rows[0] as object);
  const cell = (v: unknown) => (typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(2)) : String(v ?? ''));
  const w = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padStart(w[i] as number)).join(' | ');
  return [line(cols), w.map((n) => '-'.repeat(n)).join('-|-'), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}

/** POSTs JSON to a started server and returns its envelope; anything but 200 throws (set-up calls). */
export async function postJson(url: string, path: string, body: unknown, token?: string): Promise<{ data: Record<string, unknown> }> {
  const r = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { data: Record<string, unknown> };
}
