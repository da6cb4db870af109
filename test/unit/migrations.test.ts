// sql/: every migration has its own version number (listMigrations refuses two files sharing one,
// which parallel branches merged side by side can produce).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listFunctions, listMigrations } from '../../src/store/migrate.js';

const dir = `${mkdtempSync(join(tmpdir(), 'commons-migrations-'))}/`;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('listMigrations', () => {
  it("lists the project's migrations with distinct, increasing versions", () => {
    const versions = listMigrations().map((m) => m.version);
    expect(versions.length).toBeGreaterThan(20);
    expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
  });

  it('refuses two files with one version, naming both', () => {
    writeFileSync(join(dir, '001_a.sql'), 'SELECT 1;');
    writeFileSync(join(dir, '002_b.sql'), 'SELECT 1;');
    expect(listMigrations(dir).map((m) => m.name)).toEqual(['001_a.sql', '002_b.sql']);
    writeFileSync(join(dir, '002_c.sql'), 'SELECT 1;');
    expect(() => listMigrations(dir)).toThrow('two migrations share version 2: 002_b.sql and 002_c.sql');
  });

  it('each SQL function lives in its own file, named as it, and no later migration writes one out again', () => {
    const fns = listFunctions();
    expect(fns.length).toBeGreaterThan(15);
    for (const f of fns) {
      const defs = [...f.text.matchAll(/CREATE\s+(OR\s+REPLACE\s+)?FUNCTION\s+(\w+)\s*\(/gi)];
      expect(
        defs.map((d) => [d[1] !== undefined, d[2]]),
        f.name,
      ).toEqual([[true, f.name.replace(/\.sql$/, '')]]);
    }
    // Every function a migration ever defined has its file (its live definition), unless dropped.
    const live = new Set(fns.map((f) => f.name.replace(/\.sql$/, '')));
    for (const m of listMigrations()) {
      for (const d of m.text.matchAll(/CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(\w+)\s*\(/gi)) {
        if (m.version > 31) throw new Error(`${m.name} defines ${d[1]}: edit sql/functions/${d[1]}.sql instead`);
        expect(live.has(d[1] as string), `${d[1]} (${m.name}) has no file in sql/functions/`).toBe(true);
      }
    }
  });
});
