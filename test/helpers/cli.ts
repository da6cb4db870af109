// Drives the `commons` command line as a child process, as an agent's shell would: this tree's
// command line built into a temporary folder (scripts/build.mjs cli DIR), each run with its own
// config folder and the service's URL, its output and exit code collected. Plus the two faults
// its tests put between it and the service: a TCP proxy that drops every connection and refuses
// new ones until reopened, and an HTTP proxy that answers a scripted status instead of the
// service's answer.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Builds the command line of this tree into a fresh folder; returns the path of cli.js. */
export function buildCli(): string {
  const dir = mkdtempSync(join(tmpdir(), 'commons-cli-'));
  execFileSync(process.execPath, ['scripts/build.mjs', 'cli', dir], { stdio: 'inherit' });
  return join(dir, 'cli.js');
}

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves when the output so far satisfies `pred` (rejects after timeoutMs, or when it exits first). */
  until(pred: (out: { stdout: string; stderr: string }) => boolean, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

export function startCli(cli: string, args: string[], env: Record<string, string | undefined>, input?: string): CliRun {
  const clean = { ...process.env };
  for (const k of ['COMMONS_URL', 'COMMONS_TOKEN', 'OPERATOR_TOKEN', 'XDG_CONFIG_HOME', 'COMMONS_MAX_WAIT_S']) delete clean[k];
  const child = spawn(process.execPath, [cli, ...args], {
    env: { ...clean, ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin?.end(input);
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const poke = () => {
    for (const w of [...waiters]) w();
  };
  child.stdout?.on('data', (b: Buffer) => {
    stdout += b.toString();
    poke();
  });
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
    poke();
  });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((ok) =>
    child.once('close', (code) => {
      ok({ code, stdout, stderr });
      poke();
    }),
  );
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    until(pred, timeoutMs = 60_000) {
      return new Promise((ok, ko) => {
        const check = () => {
          if (pred({ stdout, stderr })) {
            waiters.delete(check);
            clearTimeout(timer);
            ok();
          } else if (ended) {
            waiters.delete(check);
            clearTimeout(timer);
            ko(new Error(`commons ${args.join(' ')} exited first:\n${stdout}\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          ko(new Error(`commons ${args.join(' ')}: not seen within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

/** Runs npx as a shell outside npm would: without the npm_* variables of the npm that runs the tests. */
export function runNpx(args: string[], cwd: string, cache: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  const child = spawn('npx', args, { cwd, env: { ...env, npm_config_cache: cache }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString();
  });
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  return new Promise((ok) => child.once('close', (code) => ok({ code, stdout, stderr })));
}

/** Runs `commons ARGS` on a terminal (util-linux `script` gives it one), typing `input` into it. */
export function onTerminal(cli: string, args: string[], env: Record<string, string>, input: string) {
  const quote = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;
  const line = [process.execPath, cli, ...args].map(quote).join(' ');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(COMMONS_|OPERATOR_TOKEN|XDG_CONFIG_HOME)/.test(k)));
  const child = spawn('script', ['-qec', line, '/dev/null'], { env: { ...clean, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(input);
  let output = '';
  for (const s of [child.stdout, child.stderr])
    s.on('data', (b: Buffer) => {
      output += b.toString();
    });
  return new Promise<{ code: number | null; output: string }>((ok) => child.once('close', (code) => ok({ code, output })));
}

export interface TcpProxy {
  url: string;
  /** Destroys every open connection and refuses new ones until reopen(). */
  drop(): void;
  reopen(): void;
  close(): Promise<void>;
}

export async function tcpProxy(target: string): Promise<TcpProxy> {
  const t = new URL(target);
  const open = new Set<Socket>();
  let down = false;
  const server: Server = createServer((c) => {
    if (down) return c.destroy();
    const u = createConnection(Number(t.port), t.hostname);
    for (const s of [c, u]) {
      open.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        open.delete(s);
        c.destroy();
        u.destroy();
      });
    }
    c.pipe(u);
    u.pipe(c);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    drop() {
      down = true;
      for (const s of open) s.destroy();
    },
    reopen() {
      down = false;
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

export interface Seen {
  method: string;
  path: string;
  key: string | undefined;
  at: number;
}

/** What the fault proxy does with the next request: forward it and pass the answer on, forward it
 * and answer `status` instead (the answer lost), or answer `status` without forwarding. */
export type Step = { forward: boolean; status?: number; retryAfter?: string };

export interface FaultProxy {
  url: string;
  seen: Seen[];
  /** Steps for the next requests, in order; once they run out, requests are forwarded. */
  script(steps: Step[]): void;
  close(): Promise<void>;
}

const bodyOf = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((ok) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => ok(Buffer.concat(parts)));
  });

export async function faultProxy(target: string): Promise<FaultProxy> {
  const seen: Seen[] = [];
  let steps: Step[] = [];
  const server = createHttpServer(async (req, res) => {
    const body = await bodyOf(req);
    const key = req.headers['idempotency-key'];
    seen.push({ method: req.method ?? '', path: req.url ?? '', key: typeof key === 'string' ? key : undefined, at: Date.now() });
    const step = steps.shift() ?? { forward: true };
    let answer: { status: number; type: string; text: string } | undefined;
    if (step.forward) {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
      const r = await fetch(target + (req.url ?? '/'), { method: req.method ?? 'GET', headers, ...(body.length ? { body } : {}) });
      answer = { status: r.status, type: r.headers.get('content-type') ?? 'application/json', text: await r.text() };
    }
    if (step.status !== undefined) {
      const code = step.status === 429 ? 'RATE_LIMITED' : 'UNAVAILABLE';
      const error = { code, message: 'injected by the test', next: { method: req.method, path: req.url } };
      answer = {
        status: step.status,
        type: 'application/json',
        text: JSON.stringify({ success: false, data: null, error, timestamp: new Date().toISOString() }),
      };
    }
    res.writeHead(answer?.status ?? 502, {
      'content-type': answer?.type ?? 'text/plain',
      ...(step.retryAfter ? { 'retry-after': step.retryAfter } : {}),
    });
    res.end(answer?.text ?? '');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    script(s) {
      steps = [...s];
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** A TCP port on 127.0.0.1 that nothing listens on (taken, then released). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}
