// Where the service finds the files it ships beside its code (sql/ migrations, public/ page
// assets). They are found by walking up from the module that asks, so the same code works from
// src/ (tsx, vitest) and from the bundle in dist/ (`npm start`), whose modules sit one level
// below the project root instead of two or three.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The first `dir/name` above the module at `moduleUrl` in which `marker` exists; throws when none does. */
export function findUp(moduleUrl: string, name: string, marker: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    if (existsSync(join(dir, name, marker))) return join(dir, name);
    const up = dirname(dir);
    if (up === dir) throw new Error(`${name}/ (with ${marker}) was not found above ${fileURLToPath(moduleUrl)}`);
    dir = up;
  }
}
