import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
// @ts-expect-error: a plain module shared with .ci/summary.mjs (no types of its own).
import { projectsFor } from './test/suites.mjs';

// Which files this run loads, grouped (test/suites.mjs; README "Test it"): COMMONS_TEST_RUN picks
// the run, DATABASE_URL decides whether the real-only files are loaded at all.
const run = process.env.COMMONS_TEST_RUN || 'default';
const projects = projectsFor(run, { real: Boolean(process.env.DATABASE_URL) }) as { name: string; include: string[]; exclude: string[] }[];

// Most test time waits on servers (PostgreSQL, sockets, child nodes), so two files share two
// cores; the bounds in the tests are the loaded-machine ones either way (test/unit/test-rules).
const workers = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    // The PGlite template, the contract gate's documents and validators and the real servers'
    // check: once per run, for every group (test/helpers/global-setup.ts).
    globalSetup: ['test/helpers/global-setup.ts'],
    maxWorkers: workers,
    projects: projects.map((p) => ({
      test: {
        name: p.name,
        include: p.include,
        exclude: p.exclude,
        // The contract gate checks every answer any test receives (test/helpers/contract-gate.ts);
        // it loads the gate only when a file first talks to the service.
        setupFiles: ['test/helpers/gate-setup.ts'],
        // Debian's Chromium, installed on first need when this process may (chromium-setup.ts).
        ...(p.name === 'browser' ? { globalSetup: ['test/helpers/chromium-setup.ts'] } : {}),
        pool: 'forks',
        // A worker runs its files one after another in one process, so the service's modules are
        // loaded once per worker, not once per file (about 3 s each): files share nothing else
        // (each starts and closes its own servers; gate-setup.ts runs again for each file). The
        // release group keeps a process per file: its heap readings must see only their own file.
        isolate: p.name === 'release',
        testTimeout: 30_000,
        hookTimeout: 60_000,
        teardownTimeout: 20_000,
      },
    })),
    // Every run ends with its 20 slowest files (.ci/run names the same reporter beside the JSON one).
    reporters: ['default', './test/helpers/slowest-reporter.ts'],
  },
});
