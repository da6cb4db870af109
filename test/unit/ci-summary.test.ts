// .ci/summary.mjs's rule for a run that leaves files to the host (the node24 run in the Debian 13
// root leaves the browser tests to the host's real run): the left-out file must be absent from
// that run and have passed tests elsewhere in the same summary, or CI counts a failure.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'commons-ci-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The files a real run must pass tests of, as the summary itself lists them.
const { REQUIRED_IN_REAL: REQUIRED } = (await import('../../.ci/summary.mjs' as string)) as { REQUIRED_IN_REAL: string[] };

/** A vitest JSON report in which each file passed one test, and its exit status 0. */
function report(name: string, files: string[]): void {
  const r = {
    numTotalTests: files.length,
    numPassedTests: files.length,
    numFailedTests: 0,
    numPendingTests: 0,
    numTodoTests: 0,
    success: true,
    testResults: files.map((f) => ({ name: `/src/test/${f}`, status: 'passed', assertionResults: [{ status: 'passed', fullName: 't' }] })),
  };
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(r));
  writeFileSync(join(dir, `${name}.rc`), '0\n');
}

function summary(...suites: string[]): { counts: string; stderr: string } {
  const r = spawnSync(process.execPath, ['.ci/summary.mjs', dir, ...suites], { encoding: 'utf8' });
  return { counts: r.stdout.trim(), stderr: r.stderr };
}

describe('.ci/summary.mjs host=', () => {
  it('accepts a file left out of one run that passed in another, and says so', () => {
    report('real', [...REQUIRED, 'page-browser.test.ts']);
    report('node24', REQUIRED);
    const r = summary('real:real', 'node24:real:host=page-browser.test.ts');
    expect(r.counts).toBe(`${2 * REQUIRED.length + 1} 0`);
    expect(r.stderr).toContain('node24: page-browser.test.ts left out here (browser tests stay on the host); passed 1 in real');
  });

  it('fails when the left-out file passed nowhere else, or ran in the run that leaves it out', () => {
    report('real', REQUIRED);
    report('node24', [...REQUIRED, 'page-browser.test.ts']);
    const r = summary('real:real', 'node24:real:host=page-browser.test.ts');
    expect(r.counts).toBe(`${2 * REQUIRED.length + 1} 2`);
    expect(r.stderr).toContain('CI: the node24 suite ran page-browser.test.ts, which it is meant to leave to the host');
    expect(r.stderr).toContain('CI: the node24 suite left out page-browser.test.ts, and no other suite passed a test of it');
  });
});
