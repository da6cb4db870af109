// Runs a server (or a command) as a plain child process, as an operator or a container would, and
// waits for what it prints instead of sleeping.
import { type ChildProcess, spawn } from 'node:child_process';

export interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export function run(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Proc {
  const child = spawn(cmd, args, {
    cwd: opts.cwd ?? process.cwd(),
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => {
    out += b.toString();
  });
  child.stderr?.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  return { child, output: () => out, exited };
}

/** Resolves with the URL a started server logs ("commons listening"); rejects if it exits first. */
export function listening(p: Proc, timeoutMs = 60_000): Promise<string> {
  return new Promise((ok, ko) => {
    const timer = setTimeout(() => ko(new Error(`no "commons listening" within ${timeoutMs} ms:\n${p.output()}`)), timeoutMs);
    const check = () => {
      const m = /"url":"(http:\/\/[^"]+)".*"msg":"commons listening"/.exec(p.output());
      if (m) {
        clearTimeout(timer);
        ok(m[1] as string);
      }
    };
    p.child.stdout?.on('data', check);
    p.exited.then((code) => {
      clearTimeout(timer);
      ko(new Error(`server exited with ${code} before listening:\n${p.output()}`));
    });
  });
}

/** Runs a command to its end; resolves with its exit code and output. */
export async function runToEnd(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const p = run(cmd, args, opts);
  const code = await p.exited;
  return { code, output: p.output() };
}
