// The embedded database's worker dies (DECISIONS.md "Reliability promises"): the process exits at
// once with a non-zero code, so a supervisor restarts it, instead of hanging with every query
// waiting on a socket nobody serves. Runs on either backend setting (it is embedded by nature).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { templateDir } from '../helpers/global-setup.js';

it('the process exits non-zero within seconds of its database worker dying', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'commons-worker-dies-'));
  cpSync(templateDir(), dir, { recursive: true });
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'embedded-worker-dies.ts'), dir], {
      env: { ...process.env, DATABASE_URL: '', REDIS_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    let startedAt = 0;
    child.stdout.on('data', () => {
      if (!startedAt && out.includes('"url"')) startedAt = Date.now();
    });
    const code = await new Promise<number | null>((ok) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        ok(null);
      }, 60_000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        ok(c);
      });
    });
    expect(out).toContain('"url"');
    // "At once": well before any supervisor's patience runs out.
    expect(Date.now() - startedAt).toBeLessThan(5000);
    expect(out).not.toContain('still running');
    expect(code, out).toBe(70);
    expect(out).toContain('the embedded database stopped');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
