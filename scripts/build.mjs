// `npm run build` (also run by `npm ci` through `prepare`): compiles src/ to dist/ with tsc, then
// copies the files tsc does not emit (the PGlite worker is plain ESM loaded by URL at run time).
// `npm start` runs dist/main.js with node itself, so starting never transpiles.
// An install without dev dependencies (a container's runtime stage) has no compiler: there the
// dist/ built earlier is kept, and its absence is an error.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  if (existsSync('dist/main.js')) {
    console.log('build: no TypeScript compiler (production install); keeping the existing dist/');
    process.exit(0);
  }
  console.error('build: dist/ is missing and TypeScript is not installed: run `npm ci` (with dev dependencies) first');
  process.exit(1);
}
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
mkdirSync('dist/store', { recursive: true });
copyFileSync('src/store/pglite-worker.mjs', 'dist/store/pglite-worker.mjs');
