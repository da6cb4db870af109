// Real servers a fault test owns and may kill (common rules; DECISIONS.md "Reliability promises"):
// a private PostgreSQL cluster (initdb and pg_ctl as the postgres user, on a free port), a private
// redis-server on a free port, and service nodes as child processes killed with SIGKILL.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(import.meta.dirname, '..', '..');

/** These tests need the PostgreSQL and Redis binaries and root (to act as the postgres user). */
export function faultToolsPresent(): boolean {
  try {
    for (const bin of ['initdb', 'pg_ctl', 'redis-server', 'runuser']) execFileSync('which', [bin], { stdio: 'ignore' });
    return process.getuid?.() === 0;
  } catch {
    return false;
  }
}

/** The fault suite brings its own servers, so it does not depend on DATABASE_URL; it runs once, in
 * a real-services run (DATABASE_URL set: CI's `supported` run, README "Test it"): running it again in
 * the embedded run would double its minutes for nothing, and a machine without PostgreSQL's
 * binaries cannot run it at all. */
export const faultsEnabled = Boolean(process.env.DATABASE_URL) && faultToolsPresent();
if (!faultsEnabled) console.log("fault suite: runs where DATABASE_URL is set (PostgreSQL and Redis binaries, root): CI's supported run");

export function freePort(): Promise<number> {
  return new Promise((ok, ko) => {
    const srv = createServer();
    srv.once('error', ko);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => ok(port));
    });
  });
}

const asPostgres = (args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'pipe' });
/** Asynchronous, so the test's clients keep their timing while PostgreSQL starts. */
const asPostgresAsync = (args: string[]) => promisify(execFile)('runuser', ['-u', 'postgres', '--', ...args]);

export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://root@127.0.0.1:${this.port}/postgres`;
  }

  static async create(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'commons-faultpg-'));
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
    asPostgres(['initdb', '-D', dir, '-U', 'root', '-A', 'trust', '--no-sync']);
    const pg = new PrivatePostgres(dir, await freePort());
    await pg.start();
    return pg;
  }

  async start(): Promise<void> {
    await asPostgresAsync([
      'pg_ctl',
      '-D',
      this.dir,
      '-o',
      `-p ${this.port} -k ${this.dir} -c fsync=off`,
      '-l',
      join(this.dir, 'log'),
      '-w',
      'start',
    ]);
  }

  /** SIGKILL to the postmaster and every backend it started: the database vanishes mid-work. */
  async kill(): Promise<void> {
    const pid = Number(readFileSync(join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    // Stopped first, the postmaster cannot fork a backend between the listing and the kill (an
    // orphan backend would go on answering its connection as if the database were there).
    process.kill(pid, 'SIGSTOP');
    const children = childrenOf(pid);
    for (const p of [pid, ...children]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await waitGone([pid, ...children]);
  }

  /** SIGSTOP to the postmaster and every backend: a database that accepts nothing and answers
   * nothing (stuck, not gone: connections stay open, no error ever comes back). */
  freeze(): void {
    const pid = this.pid();
    process.kill(pid, 'SIGSTOP');
    for (const p of childrenOf(pid)) signalIfAlive(p, 'SIGSTOP');
  }

  /** SIGCONT to what freeze() stopped. */
  thaw(): void {
    const pid = this.pid();
    for (const p of childrenOf(pid)) signalIfAlive(p, 'SIGCONT');
    signalIfAlive(pid, 'SIGCONT');
  }

  private pid(): number {
    return Number(readFileSync(join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  stop(): void {
    try {
      asPostgres(['pg_ctl', '-D', this.dir, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // not running
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A backend may exit between the listing and the signal (a running cluster's backends end when
 * their client goes, e.g. on a second thaw after the node was killed): that is not a failure. */
function signalIfAlive(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

/** The processes whose parent is `pid` (read from /proc: only the ones this test started). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(d));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

async function waitGone(pids: number[]): Promise<void> {
  const until = Date.now() + 5000;
  for (const p of pids) {
    while (Date.now() < until) {
      try {
        process.kill(p, 0);
      } catch {
        break;
      }
      await new Promise((ok) => setTimeout(ok, 20));
    }
  }
}

export class PrivateRedis {
  private child: ChildProcess | null = null;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async create(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.start();
    return r;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    await new Promise<void>((ok, ko) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) ok();
      });
      child.on('exit', (code) => ko(new Error(`redis-server exited with ${code}: ${out}`)));
    });
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((ok) => child.once('exit', ok));
    child.kill('SIGKILL');
    await gone;
    this.child = null;
  }
}

export interface Node {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  log: () => string;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts the service as a child process (`node --import tsx src/main.ts`) and waits for its URL. */
export function startNode(env: Record<string, string>, name = 'node'): Promise<Node> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMITS: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  return new Promise((ok, ko) => {
    const timer = setTimeout(() => ko(new Error(`${name} did not start: ${out}`)), 90_000);
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out
        .split('\n')
        .slice(0, -1)
        .find((l) => l.includes('commons listening'));
      if (!line) return;
      clearTimeout(timer);
      ok({
        child,
        url: (JSON.parse(line) as { url: string }).url,
        exited,
        log: () => out,
        kill: (signal = 'SIGKILL') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        },
      });
    });
    child.on('exit', (code) => ko(new Error(`${name} exited with ${code}: ${out}`)));
  });
}

/** SIGKILL to `node`, then a new node with `env` (the same data): the new node and how long the
 * return took, from the kill to its listening line. */
export async function killAndRestart(node: Node, env: Record<string, string>, name = 'node'): Promise<{ node: Node; restartMs: number }> {
  node.kill('SIGKILL');
  await node.exited;
  const killedAt = Date.now();
  const next = await startNode(env, name);
  return { node: next, restartMs: Date.now() - killedAt };
}
