// What the test suite holds and which run loads what: one table, read by vitest.config.ts (which
// files each run loads, in which group) and by .ci/summary.mjs (which file ran where, and that
// every file ran somewhere). README "Test it" explains the runs.
//
// Groups (vitest projects; every file is in exactly one):
//   unit      pure logic and the tools' own rules: no server
//   contract  the published documents and protocol SDK clients against a server
//   e2e       the service from outside, one server (or two nodes) per file
//   browser   real Chromium against the pages
//   faults    the service under faults: private servers killed, budgets spent, hostile clients
//   release   release-sized runs: the chaos soak, the Dockerfile's stages played (two `npm ci`),
//             the model-based task suite, the 10,000-request fuzz. (The task races stay in faults:
//             their embedded variant, one node's scheduler passes racing, runs nowhere else.)
//
// Runs (COMMONS_TEST_RUN; README "Test it"):
//   default   `npm test`: every group but the release's; without DATABASE_URL the files in
//             REAL_ONLY, which only skip on the embedded store, are not loaded
//   supported the supported runtime against the real services (CI's Debian 13 root, Node 24): every
//             group but the browser's (Chromium stays on the host), the release group included
//   release   the release group alone (what `supported` adds to the default's groups)
//   fallback  the host's Node 20 and the fallback uWS build against the real services: the files
//             whose behaviour differs between the two uWS builds (TRANSPORT)

export const GROUPS = {
  unit: ['test/unit/**/*.test.ts'],
  contract: ['test/contract/**/*.test.ts'],
  e2e: ['test/e2e/**/*.test.ts'],
  browser: ['test/e2e/page-browser.test.ts', 'test/e2e/operator-console-browser.test.ts', 'test/e2e/campaigns-page.test.ts'],
  faults: ['test/faults/**/*.test.ts'],
  release: ['test/faults/chaos-soak.test.ts', 'test/e2e/deploy-image.test.ts', 'test/faults/fuzz.test.ts', 'test/e2e/tasks-model.test.ts'],
};

/** Groups whose files are listed one by one; the glob groups leave them out. */
const LISTED = ['browser', 'release'];

/** Files that register tests only with DATABASE_URL (and REDIS_URL) set, or whose every test is
 * real-only: they only skip on the embedded store, so that run does not load them. The summary
 * fails a run in which a loaded file only skipped (it belongs here) and a supported run that did
 * not pass each of these. */
export const REAL_ONLY = [
  'test/faults/actors-killed.test.ts',
  'test/faults/chaos-soak.test.ts',
  'test/faults/chat-indexer-killed.test.ts',
  'test/faults/database-lost.test.ts',
  'test/faults/database-stuck.test.ts',
  'test/faults/inbox-two-node.test.ts',
  'test/faults/inbox-webhook-killed.test.ts',
  'test/faults/node-killed.test.ts',
  'test/faults/outage-answers.test.ts',
  'test/faults/presence-redis.test.ts',
  'test/faults/protocols-stuck.test.ts',
  'test/faults/redis-lost.test.ts',
  'test/faults/redis-writes.test.ts',
  'test/faults/stream-stuck.test.ts',
  'test/faults/stop-wedged.test.ts',
  'test/faults/two-node.test.ts',
  'test/e2e/chat-indexer-nodes.test.ts',
  'test/e2e/chat-watermark.test.ts',
  'test/e2e/idempotency-nodes.test.ts',
  'test/e2e/tasks-lanes.test.ts',
];

/** What differs between the uWS builds (HTTP and WebSocket transport, start, methods, headers,
 * hardening): the fallback run's files. */
export const TRANSPORT = [
  'test/e2e/http.test.ts',
  'test/e2e/stream.test.ts',
  'test/e2e/start.test.ts',
  'test/e2e/methods.test.ts',
  'test/e2e/headers.test.ts',
  'test/faults/hardening.test.ts',
];

export const RUNS = ['default', 'supported', 'release', 'fallback'];

/** The groups each run loads (fallback: the TRANSPORT files of whatever group holds them). */
const RUN_GROUPS = {
  default: ['unit', 'contract', 'e2e', 'browser', 'faults'],
  supported: ['unit', 'contract', 'e2e', 'faults', 'release'],
  release: ['release'],
  fallback: Object.keys(GROUPS),
};

/** Resolves one run into vitest project definitions: name, include and exclude per group. */
export function projectsFor(run, { real }) {
  if (!RUNS.includes(run)) throw new Error(`COMMONS_TEST_RUN=${run}: the runs are ${RUNS.join(', ')}`);
  const listed = LISTED.flatMap((g) => GROUPS[g]);
  const out = [];
  for (const [name, include] of Object.entries(GROUPS)) {
    if (!RUN_GROUPS[run].includes(name)) continue;
    const exclude = LISTED.includes(name) ? [] : listed.filter((f) => !include.includes(f));
    if (!real) exclude.push(...REAL_ONLY);
    if (run === 'fallback') {
      const mine = TRANSPORT.filter((f) => groupOf(f) === name);
      if (mine.length > 0) out.push({ name, include: mine, exclude: [] });
      continue;
    }
    out.push({ name, include, exclude });
  }
  return out;
}

/** The group a test file belongs to (its path relative to the project's root). */
export function groupOf(file) {
  for (const g of LISTED) if (GROUPS[g].includes(file)) return g;
  return file.split('/')[1] ?? 'unknown';
}
