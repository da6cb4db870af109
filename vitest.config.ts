import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // The contract gate checks every answer any test receives (test/helpers/contract-gate.ts).
    setupFiles: ['test/helpers/gate-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
  },
});
