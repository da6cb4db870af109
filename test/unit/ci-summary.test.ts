// .ci/summary.mjs on fabricated vitest JSON reports: its two numbers and its reasons for a green
// run, a failed test, a missing or unreadable report, a non-zero exit, counts that do not add up,
// a skip in a real-services run, a loaded file that only skipped, a real-only file the full run
// did not pass, and what the runs lose between them: a file that passed in no run, a test skipped
// in one run and passed in none. Run as CI runs it, it writes the unique tests and the slowest files.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'commons-ci-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Summary {
  passed: number;
  failed: number;
  problems: string[];
  notes: string[];
  slowest: string[];
  list: string[];
}
const { summarise, REQUIRED_IN_REAL } = (await import('../../.ci/summary.mjs' as string)) as {
  summarise: (dir: string, suites: string[], files: string[]) => Summary;
  REQUIRED_IN_REAL: string[];
};

type Status = 'passed' | 'failed' | 'skipped' | 'todo';

/** A report with the given tests per file (paths from the root), its counts as vitest writes them, and an exit status. */
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
    testResults: Object.entries(files).map(([f, tests], i) => ({
      // Each run has its own root (/src in the Debian 13 root).
      name: `/${name}-root/${f}`,
      status: tests.includes('failed') ? 'failed' : 'passed',
      message: '',
      startTime: 1000,
      endTime: 1000 + (i + 1) * 1500,
      assertionResults: tests.map((st, j) => ({
        status: st === 'skipped' ? 'pending' : st,
        fullName: `test ${j}`,
        failureMessages: st === 'failed' ? [`AssertionError: expected 1 to be 2\n    at ${f}:1:1`] : [],
      })),
    })),
    ...over,
  };
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(r));
  writeFileSync(join(dir, `${name}.rc`), `${rc}\n`);
}

/** Every file a full run must pass tests of, passing one each. */
const required = (): Record<string, Status[]> => Object.fromEntries(REQUIRED_IN_REAL.map((f) => [f, ['passed'] as Status[]]));
const A = 'test/unit/a.test.ts';
const B = 'test/e2e/b.test.ts';

describe('.ci/summary.mjs, one run at a time', () => {
  it('green runs: all passed, no failure', () => {
    reportOf('default', { [A]: ['passed', 'passed'], [B]: ['passed', 'skipped'] });
    reportOf('supported', { ...required(), [B]: ['passed', 'passed'] });
    const r = summarise(dir, ['default', 'supported:real:full'], [A, B, ...REQUIRED_IN_REAL]);
    expect([r.passed, r.failed, r.problems]).toEqual([3 + REQUIRED_IN_REAL.length + 2, 0, []]);
    // Which file passed where, for the record.
    expect(r.notes).toContain(`${B}: 1 in default, 2 in supported`);
  });

  it('a failed test counts one and is named with the first line of its failure; the non-zero exit counts too', () => {
    reportOf('default', { [A]: ['passed', 'failed'] }, '1');
    const r = summarise(dir, ['default'], [A]);
    expect([r.passed, r.failed]).toEqual([1, 2]);
    expect(r.problems).toContain(`the default run: FAILED ${A} > test 1: AssertionError: expected 1 to be 2`);
    expect(r.problems).toContain('the default run: vitest exited with 1');
  });

  it('a missing report, a missing exit status and an unreadable report each count as a failure', () => {
    reportOf('gone', { [A]: ['passed'] });
    unlinkSync(join(dir, 'gone.json'));
    reportOf('silent', { [A]: ['passed'] });
    unlinkSync(join(dir, 'silent.rc'));
    reportOf('garbled', { [A]: ['passed'] });
    writeFileSync(join(dir, 'garbled.json'), '{"numTotalTests": 1, "numPass');
    const r = summarise(dir, ['gone', 'silent', 'garbled'], [A]);
    expect([r.passed, r.failed]).toEqual([1, 3]);
    expect(r.problems.join('\n')).toMatch(/the gone run: no readable report/);
    expect(r.problems).toContain('the silent run: vitest exited with no recorded status');
    expect(r.problems.join('\n')).toMatch(/the garbled run: no readable report/);
  });

  it('counts that do not add up, a run with no test, or a failure outside a test each count', () => {
    reportOf('odd', { [A]: ['passed', 'passed'] }, '0', { numTotalTests: 3 });
    reportOf('empty', {});
    reportOf('outside', { [A]: ['passed'] }, '0', { success: false });
    const r = summarise(dir, ['odd', 'empty', 'outside'], [A]);
    expect([r.passed, r.failed]).toEqual([3, 3]);
    expect(r.problems).toContain('the odd run: 2 passed + 0 failed + 0 skipped + 0 todo != 3 tests');
    expect(r.problems).toContain('the empty run ran no test');
    expect(r.problems).toContain('the outside run failed outside a test');
  });

  it('a skip is allowed in the default run and is a failure in a real run, naming the file', () => {
    const files = { ...required(), [B]: ['passed', 'skipped'] as Status[] };
    reportOf('default', files);
    reportOf('supported', files);
    // Alone, the default run's skip is only a loss (no run passed that test), not a skip rule.
    expect(summarise(dir, ['default'], [B]).problems).toEqual([`${B} > test 1: skipped in default and passed in no run`]);
    const r = summarise(dir, ['supported:real:full'], [B]);
    expect(r.failed).toBe(2);
    expect(r.problems).toContain(`the supported run skipped 1 test(s) (in ${B}); nothing may be skipped against the real services`);
    // Skipped there and passed nowhere: lost.
    expect(r.problems).toContain(`${B} > test 1: skipped in supported and passed in no run`);
  });

  it('a loaded file that only skipped is a failure: it belongs in REAL_ONLY, not loaded there', () => {
    reportOf('default', { [A]: ['passed'], [B]: ['skipped', 'skipped'] });
    reportOf('supported', { ...required(), [B]: ['passed', 'passed'] });
    const r = summarise(dir, ['default', 'supported:real:full'], [A, B]);
    expect(r.failed).toBe(1);
    expect(r.problems).toContain(
      `the default run loaded ${B}, which only skipped there: add it to REAL_ONLY in test/suites.mjs (or give it a test that runs)`,
    );
  });

  it('a real-only or multi-node file that passed nothing in the full run is a failure, each named', () => {
    const files = required();
    const [first, second] = REQUIRED_IN_REAL as [string, string];
    delete files[first];
    files[second] = ['failed'];
    reportOf('supported', files, '1');
    const r = summarise(dir, ['supported:real:full'], []);
    expect(r.problems).toContain(`the supported run: ${first} passed no test; the multi-node, Redis and fault suites must run here`);
    expect(r.problems).toContain(`the supported run: ${second} passed no test; the multi-node, Redis and fault suites must run here`);
  });
});

describe('.ci/summary.mjs, across the runs: nothing lost', () => {
  it('a file on disk that passed in no run is a failure; one that passed in any run is not', () => {
    reportOf('default', { [A]: ['passed'] });
    reportOf('fallback', { [B]: ['failed'] }, '1');
    const r = summarise(dir, ['default', 'fallback:real'], [A, B]);
    expect(r.problems).toContain(`${B} passed no test in any run`);
    expect(r.problems.some((p) => p.startsWith(`${A} passed no test`))).toBe(false);
  });

  it('a test skipped in one run passes when another run passed it', () => {
    reportOf('default', { [B]: ['passed', 'skipped'] });
    reportOf('supported', { ...required(), [B]: ['passed', 'passed'] });
    const r = summarise(dir, ['default', 'supported:real:full'], [B]);
    expect(r.failed).toBe(0);
    expect(r.list).toContain(`${B} > test 1  [supported]`);
    expect(r.list).toContain(`${B} > test 0  [default, supported]`);
  });

  it('run as CI runs it: the counts on stdout, the unique tests and the slowest files written beside the reports', () => {
    const root = mkdtempSync(join(tmpdir(), 'commons-ci-root-'));
    try {
      mkdirSync(join(root, 'test', 'unit'), { recursive: true });
      writeFileSync(join(root, 'test', 'unit', 'a.test.ts'), '');
      reportOf('default', { [A]: ['passed', 'passed'] });
      const r = spawnSync(process.execPath, [join(process.cwd(), '.ci', 'summary.mjs'), dir, 'default'], { encoding: 'utf8', cwd: root });
      expect(r.stdout.trim()).toBe('2 0');
      expect(r.status).toBe(0);
      expect(readFileSync(join(dir, 'tests.txt'), 'utf8')).toBe(`${A} > test 0  [default]\n${A} > test 1  [default]\n`);
      expect(readFileSync(join(dir, 'slowest.txt'), 'utf8')).toBe(`default: the 20 slowest files\n      1.5 s  ${A}\n`);
      expect(r.stderr).toContain('2 unique tests passed across the runs');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
