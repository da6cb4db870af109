// test/suites.mjs, the one table of which run loads which files: every file it names exists,
// each file falls in one group, and each run's projects are what README "Test it" says.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
interface Project {
  name: string;
  include: string[];
  exclude: string[];
}
const suites = (await import('../suites.mjs' as string)) as {
  GROUPS: Record<string, string[]>;
  REAL_ONLY: string[];
  TRANSPORT: string[];
  projectsFor: (run: string, o: { real: boolean }) => Project[];
  groupOf: (file: string) => string;
};

const onDisk = readdirSync(join(ROOT, 'test'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/${f}`);

describe('test/suites.mjs', () => {
  it('names only files that exist', () => {
    const named = [...suites.REAL_ONLY, ...suites.TRANSPORT, ...suites.GROUPS.browser!, ...suites.GROUPS.release!];
    expect(named.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });

  it('puts every test file in one known group', () => {
    const groups = new Set(Object.keys(suites.GROUPS));
    expect(onDisk.filter((f) => !groups.has(suites.groupOf(f)))).toEqual([]);
    // A listed file (browser, release) is left out of the glob group its folder would give it.
    const e2e = suites.projectsFor('default', { real: true }).find((p) => p.name === 'e2e');
    expect(e2e?.exclude).toEqual(expect.arrayContaining([...suites.GROUPS.browser!, 'test/e2e/deploy-image.test.ts']));
  });

  it('the default run leaves out the release group, and the real-only files without DATABASE_URL; the supported run loads them', () => {
    const embedded = suites.projectsFor('default', { real: false });
    expect(embedded.map((p) => p.name)).toEqual(['unit', 'contract', 'e2e', 'browser', 'faults']);
    for (const p of embedded) expect(p.exclude).toEqual(expect.arrayContaining(suites.REAL_ONLY));
    const real = suites.projectsFor('supported', { real: true });
    const leftOut = suites.REAL_ONLY.filter((f) => real.find((p) => p.name === suites.groupOf(f))?.exclude.includes(f) !== false);
    expect(leftOut).toEqual([]);
  });

  it('the supported run is every group but the browser, the release run its group, the fallback run the transport files', () => {
    expect(suites.projectsFor('supported', { real: true }).map((p) => p.name)).toEqual(['unit', 'contract', 'e2e', 'faults', 'release']);
    expect(suites.projectsFor('release', { real: true })).toEqual([{ name: 'release', include: suites.GROUPS.release, exclude: [] }]);
    const fallback = suites.projectsFor('fallback', { real: true });
    expect(fallback.flatMap((p) => p.include).sort()).toEqual([...suites.TRANSPORT].sort());
    expect(() => suites.projectsFor('nightly', { real: true })).toThrow(/the runs are default, supported, release, fallback/);
  });
});
