// .ci/summary.mjs, run as CI runs it on fabricated vitest JSON reports: its two numbers and its
// reasons for a green run, a failed test, a missing or unreadable report, a non-zero exit, counts
// that do not add up, a skip in the real-services run, a multi-node suite that ran nothing there;
// and its rule for a run that leaves files to the host (the node24 run in the Debian 13 root
// leaves the browser tests to the host's real run): the left-out file must be absent from that
// run and have passed tests elsewhere in the same summary, or CI counts a failure.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
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

function summary(...suites: string[]): { counts: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, ['.ci/summary.mjs', dir, ...suites], { encoding: 'utf8' });
  return { counts: r.stdout.trim(), stderr: r.stderr, status: r.status };
}

type Status = 'passed' | 'failed' | 'skipped' | 'todo';

/** A report with the given tests per file, its counts as vitest writes them, and an exit status. */
function reportOf(name: string, files: Record<string, Status[]>, rc = '0', over: Record<string, unknown> = {}): void {
  const all = Object.values(files).flat();
  const n = (st: Status) => all.filter((x) => x === st).length;
  const r = {
    numTotalTests: all.length,
    numPassedTests: n('passed'),
    numFailedTests: n('failed'),
    numPendingTests: n('skipped'),
    numTodoTests: n('todo'),
    success: n('failed') === 0,
    testResults: Object.entries(files).map(([f, tests]) => ({
      name: `/src/test/${f}`,
      status: tests.includes('failed') ? 'failed' : 'passed',
      message: '',
      assertionResults: tests.map((st, i) => ({
        status: st === 'skipped' ? 'pending' : st,
        fullName: `${f} test ${i}`,
        failureMessages: st === 'failed' ? [`AssertionError: expected 1 to be 2\n    at ${f}:1:1`] : [],
      })),
    })),
    ...over,
  };
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(r));
  writeFileSync(join(dir, `${name}.rc`), `${rc}\n`);
}

/** Every file the real run must pass tests of, passing one each. */
const required = (): Record<string, Status[]> => Object.fromEntries(REQUIRED.map((f) => [f, ['passed'] as Status[]]));

describe('.ci/summary.mjs counts', () => {
  it('a green embedded run and a green real run: all passed, no failure, nothing said on CI lines', () => {
    reportOf('embedded', { 'a.test.ts': ['passed', 'passed'], 'b.test.ts': ['passed', 'skipped'] });
    reportOf('real', { ...required(), 'a.test.ts': ['passed', 'passed'] });
    const r = summary('embedded', 'real:real');
    expect(r.counts).toBe(`${3 + REQUIRED.length + 2} 0`);
    expect(r.stderr).not.toContain('CI:');
    // The real run names what each required suite passed.
    expect(r.stderr).toContain(`real: ${REQUIRED[0]} passed 1 test(s)`);
    // The summary itself exits 0: the numbers decide, the CI script reads them.
    expect(r.status).toBe(0);
  });

  it('a failed test counts one and is named with the first line of its failure', () => {
    reportOf('embedded', { 'a.test.ts': ['passed', 'failed'] }, '1');
    const r = summary('embedded');
    // The failed test, and the non-zero exit of vitest.
    expect(r.counts).toBe('1 2');
    expect(r.stderr).toContain('CI: the embedded suite: FAILED a.test.ts > a.test.ts test 1: AssertionError: expected 1 to be 2');
    expect(r.stderr).toContain('CI: the embedded suite: vitest exited with 1');
  });

  it('a missing report, a missing exit status and an unreadable report each count as a failure', () => {
    reportOf('gone', { 'a.test.ts': ['passed'] });
    unlinkSync(join(dir, 'gone.json'));
    reportOf('silent', { 'a.test.ts': ['passed'] });
    unlinkSync(join(dir, 'silent.rc'));
    reportOf('garbled', { 'a.test.ts': ['passed'] });
    writeFileSync(join(dir, 'garbled.json'), '{"numTotalTests": 1, "numPass');
    const r = summary('gone', 'silent', 'garbled');
    expect(r.counts).toBe('1 3');
    expect(r.stderr).toContain('CI: the gone suite: no readable report');
    expect(r.stderr).toContain('CI: the silent suite: vitest exited with no recorded status');
    expect(r.stderr).toContain('CI: the garbled suite: no readable report');
  });

  it('an exit status that is not 0 fails a run whose tests all passed (an unhandled error, a crashed worker)', () => {
    reportOf('embedded', { 'a.test.ts': ['passed'] }, '1');
    expect(summary('embedded').counts).toBe('1 1');
  });

  it('counts that do not add up, a suite that ran no test, or a failure outside a test each count', () => {
    reportOf('odd', { 'a.test.ts': ['passed', 'passed'] }, '0', { numTotalTests: 3 });
    reportOf('empty', {});
    reportOf('outside', { 'a.test.ts': ['passed'] }, '0', { success: false });
    const r = summary('odd', 'empty', 'outside');
    expect(r.counts).toBe('3 3');
    expect(r.stderr).toContain('CI: the odd suite: 2 passed + 0 failed + 0 skipped + 0 todo != 3 tests');
    expect(r.stderr).toContain('CI: the empty suite ran no test');
    expect(r.stderr).toContain('CI: the outside suite failed outside a test');
  });

  it('a skip is allowed in the embedded run and counts as a failure in the real run, naming the file', () => {
    const files = { ...required(), 'store.contract.test.ts': ['passed', 'skipped'] as Status[] };
    reportOf('embedded', files);
    reportOf('real', files);
    expect(summary('embedded').counts).toBe(`${REQUIRED.length + 1} 0`);
    const r = summary('real:real');
    expect(r.counts).toBe(`${REQUIRED.length + 1} 1`);
    expect(r.stderr).toContain(
      'CI: the real suite skipped 1 test(s) (in store.contract.test.ts); nothing may be skipped against the real services',
    );
  });

  it('a multi-node or Redis suite that passed nothing in the real run is a failure, each named', () => {
    const files = required();
    const [first, second] = REQUIRED as [string, string];
    delete files[first];
    files[second] = ['skipped'];
    reportOf('real', files);
    const r = summary('real:real');
    // The missing one, and the one that only skipped (which is also a skip in the real run).
    expect(r.counts).toBe(`${REQUIRED.length - 2} 3`);
    expect(r.stderr).toContain(`CI: the real suite: ${first} passed no test; the multi-node and Redis suites must run here`);
    expect(r.stderr).toContain(`CI: the real suite: ${second} passed no test; the multi-node and Redis suites must run here`);
  });
});

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
