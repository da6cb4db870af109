// Reads the vitest JSON reports and exit codes that .ci/run leaves in .ci/out and prints the two
// numbers `passed failed` on stdout (reasons, which file ran where and the slowest files on
// stderr). A green run must mean every suite ran and nothing was lost between the runs:
// - per run: a non-zero vitest exit (failed test, unhandled error or rejection, crashed worker), a
//   missing or unparsable report, counts that do not add up, or a run with no test each count as
//   a failure; in a run marked `real` a skipped test is a failure; a loaded file that only
//   skipped is a failure (it belongs in test/suites.mjs REAL_ONLY, which that run does not load);
// - across runs: every test file on disk passed tests in at least one run; every test skipped in
//   one run passed in another; in a run marked `full`, every file of REAL_ONLY and REQUIRED_IN_REAL
//   passed tests.
// It also writes DIR/tests.txt (each unique test that passed, `file > full name`, with the runs it
// passed in) and DIR/slowest.txt (the 20 slowest files of each run).
// Usage: node .ci/summary.mjs DIR NAME[:real][:full] ...   (DIR holds NAME.json and NAME.rc; run
// from the project's root, whose test/ folder lists the files that must run)
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { REAL_ONLY } from '../test/suites.mjs';

// Files with real-only parts beside embedded ones (two nodes on one Redis and so on): a full run
// must show passed tests of each, so a missing variable cannot drop them silently.
export const REQUIRED_IN_REAL = [
  'test/contract/bus.contract.test.ts',
  'test/faults/bad-tokens.test.ts',
  'test/faults/fault-kinds.test.ts',
  'test/e2e/guests.test.ts',
  'test/e2e/token-cache.test.ts',
  'test/e2e/stream-rotation.test.ts',
  'test/e2e/read-pages.test.ts',
  'test/e2e/app-close.test.ts',
  'test/e2e/chat-hidden-index.test.ts',
  'test/e2e/campaigns-eth.test.ts',
  ...REAL_ONLY,
];

const isCount = (n) => Number.isInteger(n) && n >= 0;

/** A report's file name as a path from the project's root (the root differs between runs: /src in the Debian 13 root). */
export const projectPath = (name) => {
  const i = name.lastIndexOf('/test/');
  return i >= 0 ? name.slice(i + 1) : name;
};

/** Every test file under ROOT/test, as paths from ROOT. */
export function testFiles(root) {
  return readdirSync(join(root, 'test'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.ts') && !f.split('/').includes('node_modules'))
    .map((f) => `test/${f}`)
    .sort();
}

export function summarise(dir, suites, files = testFiles(process.cwd())) {
  let passed = 0;
  let failed = 0;
  const problems = [];
  const notes = [];
  const fail = (msg) => {
    failed += 1;
    problems.push(msg);
  };
  const ranIn = new Map(); // file -> Map(run -> passed tests)
  const tests = new Map(); // `file > full name` -> { passed: Set(run), skipped: Set(run) }
  const slowest = [];
  for (const spec of suites) {
    const [name, ...modes] = spec.split(':');
    const real = modes.includes('real');
    const full = modes.includes('full');
    const rcFile = join(dir, `${name}.rc`);
    const rc = existsSync(rcFile) ? readFileSync(rcFile, 'utf8').trim() : '';
    if (rc !== '0') fail(`the ${name} run: vitest exited with ${rc === '' ? 'no recorded status' : rc}`);
    let r;
    try {
      r = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8'));
    } catch (e) {
      fail(`the ${name} run: no readable report (${e.message})`);
      continue;
    }
    const { numTotalTests: total, numPassedTests: p, numFailedTests: f, numPendingTests: s, numTodoTests: t } = r ?? {};
    if (![total, p, f, s, t].every(isCount) || !Array.isArray(r.testResults)) {
      fail(`the ${name} run: the report has no valid counts`);
      continue;
    }
    passed += p;
    failed += f;
    if (p + f + s + t !== total) fail(`the ${name} run: ${p} passed + ${f} failed + ${s} skipped + ${t} todo != ${total} tests`);
    if (total === 0) fail(`the ${name} run ran no test`);
    if (!r.success && f === 0) fail(`the ${name} run failed outside a test`);
    const byFile = new Map();
    const times = [];
    for (const tr of r.testResults) {
      const file = projectPath(tr.name);
      const results = tr.assertionResults ?? [];
      const n = results.filter((a) => a.status === 'passed').length;
      byFile.set(file, (byFile.get(file) ?? 0) + n);
      if (Number.isFinite(tr.endTime - tr.startTime)) times.push([file, tr.endTime - tr.startTime]);
      for (const a of results) {
        const key = `${file} > ${a.fullName}`;
        const seen = tests.get(key) ?? { passed: new Set(), skipped: new Set() };
        tests.set(key, seen);
        if (a.status === 'passed') seen.passed.add(name);
        else if (a.status !== 'failed') seen.skipped.add(name);
        if (a.status !== 'failed') continue;
        // Each failed test by name, with the first line of its failure, so the run's tail says which.
        const why = String((a.failureMessages ?? [])[0] ?? '').split('\n')[0].slice(0, 240);
        problems.push(`the ${name} run: FAILED ${file} > ${a.fullName}: ${why}`);
      }
      if (tr.status === 'failed' && !results.some((a) => a.status === 'failed'))
        fail(`the ${name} run: ${file} failed to load or run: ${String(tr.message ?? '').slice(0, 300)}`);
      if (results.length > 0 && n === 0 && !results.some((a) => a.status === 'failed'))
        fail(`the ${name} run loaded ${file}, which only skipped there: add it to REAL_ONLY in test/suites.mjs (or give it a test that runs)`);
    }
    for (const [file, n] of byFile) {
      const m = ranIn.get(file) ?? new Map();
      m.set(name, n);
      ranIn.set(file, m);
    }
    times.sort((a, b) => b[1] - a[1]);
    slowest.push(`${name}: the 20 slowest files`, ...times.slice(0, 20).map(([file, ms]) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file}`));
    if (real && s + t > 0) {
      const skipped = r.testResults
        .filter((tr) => (tr.assertionResults ?? []).some((a) => a.status !== 'passed' && a.status !== 'failed'))
        .map((tr) => projectPath(tr.name));
      fail(`the ${name} run skipped ${s + t} test(s) (in ${skipped.join(', ')}); nothing may be skipped against the real services`);
    }
    if (!full) continue;
    for (const want of REQUIRED_IN_REAL) {
      const n = byFile.get(want) ?? 0;
      if (n === 0) fail(`the ${name} run: ${want} passed no test; the multi-node, Redis and fault suites must run here`);
    }
  }
  // Across runs: nothing lost.
  for (const file of files) {
    const where = [...(ranIn.get(file) ?? new Map())].filter(([, n]) => n > 0);
    if (where.length === 0) fail(`${file} passed no test in any run`);
    else notes.push(`${file}: ${where.map(([run, n]) => `${n} in ${run}`).join(', ')}`);
  }
  for (const [key, seen] of tests)
    if (seen.skipped.size > 0 && seen.passed.size === 0) fail(`${key}: skipped in ${[...seen.skipped].join(', ')} and passed in no run`);
  const list = [...tests]
    .filter(([, seen]) => seen.passed.size > 0)
    .map(([key, seen]) => `${key}  [${[...seen.passed].join(', ')}]`)
    .sort();
  return { passed, failed, problems, notes, slowest, list };
}

if (process.argv[1] && basename(process.argv[1]) === 'summary.mjs') {
  const [dir, ...suites] = process.argv.slice(2);
  const { passed, failed, problems, notes, slowest, list } = summarise(dir, suites);
  writeFileSync(join(dir, 'tests.txt'), `${list.join('\n')}\n`);
  writeFileSync(join(dir, 'slowest.txt'), `${slowest.join('\n')}\n`);
  writeFileSync(join(dir, 'files.txt'), `${notes.join('\n')}\n`);
  console.error(slowest.join('\n'));
  console.error(`${list.length} unique tests passed across the runs (${dir}/tests.txt); which file ran where: ${dir}/files.txt`);
  for (const p of problems) console.error(`CI: ${p}`);
  console.log(passed, failed);
}
