// The README's promise: `npm start` with no configuration serves the API from the compiled
// JavaScript in dist/ (built by `npm ci` through `prepare`, rebuilt here so the test sees this
// tree), an identity registers through it, and SIGTERM sent to the process `npm start` started
// (as a supervisor would) stops the server cleanly with exit code 0. Two settings differ from
// a bare `npm start`, both imposed by the test machine: PORT=0 (tests never take a fixed port)
// and DATA_DIR in a temporary directory (the working tree is not written). A fresh PGlite data
// directory is initialised here, as on a newcomer's first start.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listening, run } from '../helpers/process.js';
import { call } from '../helpers/server.js';

const dataDir = mkdtempSync(join(tmpdir(), 'commons-start-'));
let child: ChildProcess | null = null;

// Whether dist/main.js was ever missing while the rebuild ran: the build swaps dist/ in whole
// (scripts/build.mjs), so other files' tests reading dist/ meanwhile (deploy.test.ts) never see it
// gone or half-written. Looked at on every turn of the event loop until the build exits.
let missingDuringBuild = 0;
beforeAll(async () => {
  const build = spawn(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  let done = false;
  const exited = new Promise<number | null>((ok) => build.once('exit', (code) => ok(code)));
  void exited.then(() => {
    done = true;
  });
  while (!done) {
    if (!existsSync('dist/main.js')) missingDuringBuild++;
    await new Promise((ok) => setImmediate(ok));
  }
  expect(await exited).toBe(0);
}, 120_000);

afterAll(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) env[k] = process.env[k];
  return { ...env, PORT: '0', DATA_DIR: dataDir };
}

describe('the build (scripts/build.mjs)', () => {
  it('swaps dist/ in whole: dist/main.js is there on every look while the rebuild above ran', () => {
    expect(missingDuringBuild).toBe(0);
  });
});

describe('npm start', () => {
  it('serves the API on the embedded default and stops on SIGTERM with exit 0', async () => {
    child = spawn('npm', ['start', '--silent'], { cwd: process.cwd(), env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const url = await new Promise<string>((ok, ko) => {
      const timer = setTimeout(() => ko(new Error(`no listening line in time:\n${out}`)), 90_000);
      child?.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
        if (m) {
          clearTimeout(timer);
          ok(m[1] as string);
        }
      });
      child?.on('exit', (code) => ko(new Error(`exited early with ${code}:\n${out}`)));
    });
    expect(out).toContain('"store":"pglite"');
    const r = await call(url, 'POST', '/api/v1/ai/register', { body: { name: 'Newcomer', accepted_principles: true } });
    expect(r.status).toBe(200);
    expect(r.json.data.registration_number).toBe('AI-00000001');
    const me = await call(url, 'GET', '/api/v1/ai/me', { token: r.json.data.api_token });
    expect(me.json.data.name).toBe('Newcomer');
    // The server is node itself, not a transpiler wrapping it.
    const pid = Number(/"pid":(\d+)/.exec(out)?.[1]);
    expect(execFileSync('ps', ['-o', 'args=', '-p', String(pid)]).toString()).toMatch(/^node .*dist\/main\.js/);
    // The default fits a small host (issue 47): on its first start, the data directory initialised
    // and migrated, the server holds far less than the 868 MB it kept before (initdb ran in the
    // process). The goal is 200 MB at idle, measured by bench/start.ts; this bound only catches
    // a return of the old weight.
    const rssMb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
    expect(rssMb).toBeGreaterThan(0);
    expect(rssMb).toBeLessThan(300);
    // SIGTERM to the process `npm start` started (what a supervisor signals) reaches the server,
    // which stops gracefully; npm exits with the server's exit code.
    const exit = new Promise<number | null>((ok) => child?.on('exit', (code) => ok(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(out).toContain('"msg":"stopped"');
    expect(() => process.kill(pid, 0)).toThrow();
  }, 120_000);
});

describe('the first start on an empty data directory (src/first-start.ts)', () => {
  it('prepares it in a child process; SIGTERM meanwhile lets the child finish, exits 0, and the next start serves from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'commons-first-'));
    const env = { ...(cleanEnv() as Record<string, string>), DATA_DIR: dir };
    try {
      const first = spawn('npm', ['start', '--silent'], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      const exit = new Promise<number | null>((ok) => first.on('exit', (code) => ok(code)));
      await new Promise<void>((ok, ko) => {
        first.stdout?.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('in a child process')) ok();
        });
        first.on('exit', (code) => ko(new Error(`exited early with ${code}:\n${out}`)));
      });
      first.kill('SIGTERM');
      expect(await exit).toBe(0);
      expect(out).toContain('"msg":"stopped before serving: the data directory is prepared"');
      expect(out).not.toContain('commons listening');
      // Prepared, not half-made: the next start opens it as a restart (no child) and serves.
      const again = spawn('npm', ['start', '--silent'], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
      let log = '';
      again.stdout?.on('data', (d: Buffer) => {
        log += d.toString();
      });
      again.stderr?.on('data', (d: Buffer) => {
        log += d.toString();
      });
      const p = { child: again, output: () => log, exited: new Promise<number | null>((ok) => again.on('exit', (code) => ok(code))) };
      const url = await listening(p, 90_000);
      expect(p.output()).not.toContain('in a child process');
      expect((await call(url, 'GET', '/api/v1/chat')).status).toBe(200);
      p.child.kill('SIGTERM');
      expect(await p.exited, log).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('an operator token too short to keep (docs/security.md "The operator token")', () => {
  it('refuses to start: a clear line on stderr naming OPERATOR_TOKEN, exit 2, nothing listening', async () => {
    const short = 'x'.repeat(31);
    const p = run(process.execPath, ['dist/main.js'], { env: { ...(cleanEnv() as Record<string, string>), OPERATOR_TOKEN: short } });
    let stderr = '';
    p.child.stderr?.on('data', (b: Buffer) => {
      stderr += b.toString();
    });
    expect(await p.exited).toBe(2);
    expect(stderr).toContain('commons: invalid configuration, not starting');
    expect(stderr).toContain('OPERATOR_TOKEN: must be at least 32 characters');
    // The token itself is never printed.
    expect(p.output()).not.toContain(short);
    expect(p.output()).not.toContain('commons listening');
  }, 60_000);
});
