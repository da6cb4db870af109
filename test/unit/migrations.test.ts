// sql/: every migration has its own version number (listMigrations refuses two files sharing one,
// which parallel branches merged side by side can produce).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listMigrations } from '../../src/store/migrate.js';

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
});
