// Reads the vitest JSON reports and exit codes that .ci/run leaves in .ci/out and prints the two
// numbers `passed failed` on stdout (reasons on stderr). A green run must mean every suite ran:
// a non-zero vitest exit (failed test, unhandled error or rejection, crashed worker), a missing
// or unparsable report, counts that do not add up, a skipped test in the real-services run, or a
// real-services suite that executed nothing each count as a failure.
// Usage: node .ci/summary.mjs DIR NAME[:real][:host=FILE,...] ...   (DIR holds NAME.json and NAME.rc)
// `host=FILE,...`: test files deliberately left out of that run (the browser tests stay on the
// host, outside the Debian 13 root): each must be absent from it and have passed tests in
// another suite of the same summary, which is said on stderr.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

// Suites that only register tests when DATABASE_URL and REDIS_URL are set: the real run must show
// passed tests from each of them, so a missing variable cannot drop them silently.
export const REQUIRED_IN_REAL = [
  'bus.contract.test.ts',
  'presence-redis.test.ts',
  'two-node.test.ts',
  'stream-revoke.test.ts',
  // The fault suite's scenarios that start a private PostgreSQL cluster and Redis server.
  'database-lost.test.ts',
  'database-stuck.test.ts',
  'redis-lost.test.ts',
  'node-killed.test.ts',
  'protocols-stuck.test.ts',
  'stream-stuck.test.ts',
  'actors-killed.test.ts',
  // Retry-safe under chaos (issue 34): Redis killed under every write kind, keys across two nodes.
  'redis-writes.test.ts',
  'idempotency-nodes.test.ts',
  'chaos-soak.test.ts',
  'outage-answers.test.ts',
];

const isCount = (n) => Number.isInteger(n) && n >= 0;

export function summarise(dir, suites) {
  let passed = 0;
  let failed = 0;
  const problems = [];
  const fail = (msg) => {
    failed += 1;
    problems.push(msg);
  };
  const passedByFile = new Map(); // suite name -> Map(file basename -> passed tests)
  const leftOut = []; // [suite name, file]
  for (const spec of suites) {
    const [name, ...modes] = spec.split(':');
    const real = modes.includes('real');
    for (const m of modes.filter((x) => x.startsWith('host='))) for (const f of m.slice(5).split(',')) leftOut.push([name, f]);
    const rcFile = join(dir, `${name}.rc`);
    const rc = existsSync(rcFile) ? readFileSync(rcFile, 'utf8').trim() : '';
    if (rc !== '0') fail(`the ${name} suite: vitest exited with ${rc === '' ? 'no recorded status' : rc}`);
    const file = join(dir, `${name}.json`);
    let r;
    try {
      r = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      fail(`the ${name} suite: no readable report (${e.message})`);
      continue;
    }
    const { numTotalTests: total, numPassedTests: p, numFailedTests: f, numPendingTests: s, numTodoTests: t } = r ?? {};
    if (![total, p, f, s, t].every(isCount) || !Array.isArray(r.testResults)) {
      fail(`the ${name} suite: the report has no valid counts`);
      continue;
    }
    passed += p;
    failed += f;
    if (p + f + s + t !== total) fail(`the ${name} suite: ${p} passed + ${f} failed + ${s} skipped + ${t} todo != ${total} tests`);
    if (total === 0) fail(`the ${name} suite ran no test`);
    if (!r.success && f === 0) fail(`the ${name} suite failed outside a test`);
    const byFile = new Map();
    for (const tr of r.testResults) {
      const n = (tr.assertionResults ?? []).filter((a) => a.status === 'passed').length;
      byFile.set(basename(tr.name), (byFile.get(basename(tr.name)) ?? 0) + n);
    }
    passedByFile.set(name, byFile);
    for (const tr of r.testResults) {
      // Each failed test by name, with the first line of its failure, so the run's tail says which.
      for (const a of tr.assertionResults ?? []) {
        if (a.status !== 'failed') continue;
        const why = String((a.failureMessages ?? [])[0] ?? '').split('\n')[0].slice(0, 240);
        problems.push(`the ${name} suite: FAILED ${basename(tr.name)} > ${a.fullName}: ${why}`);
      }
      if (tr.status === 'failed' && !(tr.assertionResults ?? []).some((a) => a.status === 'failed')) {
        fail(`the ${name} suite: ${tr.name} failed to load or run: ${String(tr.message ?? '').slice(0, 300)}`);
      }
    }
    if (!real) continue;
    if (s + t > 0) {
      const skipped = r.testResults
        .filter((tr) => (tr.assertionResults ?? []).some((a) => a.status !== 'passed' && a.status !== 'failed'))
        .map((tr) => basename(tr.name));
      fail(`the ${name} suite skipped ${s + t} test(s) (in ${skipped.join(', ')}); nothing may be skipped against the real services`);
    }
    for (const want of REQUIRED_IN_REAL) {
      const n = byFile.get(want) ?? 0;
      if (n === 0) fail(`the ${name} suite: ${want} passed no test; the multi-node and Redis suites must run here`);
      else console.error(`${name}: ${want} passed ${n} test(s)`);
    }
  }
  for (const [name, file] of leftOut) {
    const here = passedByFile.get(name);
    if (here?.has(file)) fail(`the ${name} suite ran ${file}, which it is meant to leave to the host`);
    const elsewhere = [...passedByFile].filter(([n, m]) => n !== name && (m.get(file) ?? 0) > 0);
    if (elsewhere.length === 0) fail(`the ${name} suite left out ${file}, and no other suite passed a test of it`);
    else
      console.error(
        `${name}: ${file} left out here (browser tests stay on the host); passed ${elsewhere.map(([n, m]) => `${m.get(file)} in ${n}`).join(', ')}`,
      );
  }
  return { passed, failed, problems };
}

if (process.argv[1] && basename(process.argv[1]) === 'summary.mjs') {
  const [dir, ...suites] = process.argv.slice(2);
  const { passed, failed, problems } = summarise(dir, suites);
  for (const p of problems) console.error(`CI: ${p}`);
  console.log(passed, failed);
}
