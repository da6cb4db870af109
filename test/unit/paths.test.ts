// src/paths.ts: the files shipped beside the code (sql/, public/) are found from src/ (tsx,
// vitest) and from the bundle in dist/, which sits at a different depth below the project root.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findUp } from '../../src/paths.js';

const root = mkdtempSync(join(tmpdir(), 'commons-paths-'));
mkdirSync(join(root, 'sql'));
writeFileSync(join(root, 'sql', '001_foundation.sql'), '');
mkdirSync(join(root, 'src', 'store'), { recursive: true });
mkdirSync(join(root, 'dist'));
mkdirSync(join(root, 'elsewhere', 'sql'), { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

const url = (...p: string[]) => pathToFileURL(join(root, ...p)).href;

describe('findUp', () => {
  it('finds the same directory from a module two levels down (src/store) and one level down (dist)', () => {
    expect(findUp(url('src', 'store', 'migrate.ts'), 'sql', '001_foundation.sql')).toBe(join(root, 'sql'));
    expect(findUp(url('dist', 'chunk-ABC.js'), 'sql', '001_foundation.sql')).toBe(join(root, 'sql'));
  });

  it('skips a directory of that name without the marker file', () => {
    expect(findUp(url('elsewhere', 'mod.js'), 'sql', '001_foundation.sql')).toBe(join(root, 'sql'));
  });

  it('throws, naming what it looked for, when no directory above holds it', () => {
    expect(() => findUp(url('dist', 'chunk-ABC.js'), 'public', 'page.js')).toThrow(/public\/ \(with page\.js\) was not found/);
  });
});
