// Rules the test suite keeps about itself (common test rules; issue "Tests and CI that cannot pass
// by accident"): no test or describe is retried (a retry hides the fault it would show), vitest is
// not configured to retry, and no test file keeps its own copy of a shared helper.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const files = testFiles(join(ROOT, 'test'))
  .filter((p) => p !== import.meta.filename)
  .map((p) => ({ path: relative(ROOT, p), text: readFileSync(p, 'utf8') }));

it('finds the test files', () => {
  expect(files.length).toBeGreaterThan(50);
});

it('retries no test or describe, and vitest retries nothing', () => {
  // `{ retry: 2 }` as a test/describe option, `.retry(`, or `retry:` in the config.
  const retried = files.filter((f) => /\bretry\s*:\s*\d|\.retry\s*\(/.test(f.text)).map((f) => f.path);
  expect(retried).toEqual([]);
  expect(readFileSync(join(ROOT, 'vitest.config.ts'), 'utf8')).not.toMatch(/\bretry\b/);
});

it('keeps one copy of the shared helpers (waitFor, countRows, startNode live in test/helpers and test/faults/servers.ts)', () => {
  const copies = files.filter((f) => /(?:function|const)\s+(?:waitFor|countRows|startNode)\b/.test(f.text)).map((f) => f.path);
  expect(copies).toEqual([]);
});
