// `npm run build` (also run by `npm ci` through `prepare`): bundles src/ into dist/ with esbuild,
// one ES module per entry (dist/main.js for `npm start`, dist/backup.js for `npm run backup`) plus
// the chunks they share, then copies the PGlite worker, which runs as plain ESM loaded by URL.
// `npm start` runs dist/main.js with node itself, so starting never transpiles. Why a bundle and
// not tsc's one file per module: Node 20 has no compile cache, and resolving, reading and
// compiling our 208 modules and the dependencies' was most of the start; the bundle answers its
// first request in about half the time (BENCHMARKS.md "Start (`bench/start.ts`)"). Type checking
// is `npm run check` (tsc --noEmit), which CI runs.
// An install without dev dependencies (a container's runtime stage) has no bundler: there the
// dist/ built earlier is kept, and its absence is an error.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ESM_VIEW_LOADS } from './esm-view-loads.mjs';

// The first `npx commons` in a clone links the package into npx's cache, and npm runs `prepare`
// for it: the dist/ that `npm ci` built is the one to run, and a server started from it
// (`npm start`) may be running, so it is neither deleted nor rebuilt then.
if (process.env.npm_command === 'exec' && process.env.npm_lifecycle_event === 'prepare' && existsSync('dist/cli.js')) {
  console.log('build: prepare run by npx to link the package; keeping the existing dist/');
  process.exit(0);
}

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  if (existsSync('dist/main.js')) {
    console.log('build: no bundler (production install); keeping the existing dist/');
    process.exit(0);
  }
  console.error('build: dist/ is missing and esbuild is not installed: run `npm ci` (with dev dependencies) first');
  process.exit(1);
}

// Bundled CommonJS dependencies call require() for Node's own modules.
const REQUIRE_SHIM = "import { createRequire as __commonsRequire } from 'node:module'; const require = __commonsRequire(import.meta.url);";
/** What the service's and the command line's bundles share: ESM for Node 20+, split into chunks,
 * stack traces mapped back to src/ through the mappings alone (the sources stay out of the map). */
const NODE_BUNDLE = {
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  sourcesContent: false,
  logLevel: 'warning',
};

/** Each ES import of those built-ins in the bundle (ours and the dependencies', e.g. ethers'
 * `import http from "http"`) becomes a CommonJS module holding `require(name)`: esbuild then reads
 * a named import as a property where it is used, and no export is read before its first use
 * (issue 47, docs/benchmarks-history.md "Memory at rest on Node 24"). Only those: a named import
 * from a CommonJS module is a getter call at each use (`Buffer`, `performance` on the read path). */
const builtinsRequired = {
  name: 'builtins-required',
  setup(build) {
    const names = new Set(ESM_VIEW_LOADS.flatMap((n) => [n, `node:${n}`]));
    build.onResolve({ filter: /^[a-z_:/]+$/ }, (args) =>
      (args.kind === 'import-statement' || args.kind === 'dynamic-import') && names.has(args.path)
        ? { path: args.path.replace(/^node:/, ''), namespace: 'builtin-required' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'builtin-required' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`,
      loader: 'js',
    }));
  },
};

async function buildCli(outdir) {
  rmSync(join(outdir, 'cli-chunks'), { recursive: true, force: true });
  await esbuild.build({
    ...NODE_BUNDLE,
    entryPoints: { cli: 'src/cli/main.ts' },
    outdir,
    chunkNames: 'cli-chunks/[name]-[hash]',
    // ws loads these optional native helpers when present and works without them.
    external: ['bufferutil', 'utf-8-validate'],
    banner: { js: `#!/usr/bin/env node\n${REQUIRE_SHIM}` },
    plugins: [builtinsRequired],
  });
  // `npx commons` runs the file itself: it must be executable.
  chmodSync(join(outdir, 'cli.js'), 0o755);
}

/** V8 keeps each module's source text in memory for the life of the process (lazy compilation,
 * `Function.prototype.toString`), one byte a character while every character is Latin-1 and two
 * bytes a character from the first one that is not. esbuild writes strings, templates, regular
 * expressions and identifiers in ASCII (charset 'ascii', its default) but copies comments as they
 * are, and a dependency's comment with a typographic apostrophe or a dash doubled its chunk's
 * source in memory (about 2.7 MB of the service's heap at rest, issue 47). Each such character is
 * replaced by '?' per UTF-16 unit, so the source maps' columns stay right. Only comments may
 * change: a chunk whose comment-free form (esbuild's whitespace minifier, which drops comments)
 * differs after the replacement fails the build. */
async function asciiComments(outdir) {
  for (const name of readdirSync(outdir)) {
    if (!name.endsWith('.js')) continue;
    const file = join(outdir, name);
    const text = readFileSync(file, 'utf8');
    const ascii = text.replace(/[^\x00-\x7f]/g, '?');
    if (ascii === text) continue;
    const bare = async (code) => (await esbuild.transform(code, { minifyWhitespace: true, format: 'esm', charset: 'utf8' })).code;
    if ((await bare(text)) !== (await bare(ascii))) throw new Error(`build: ${file} has non-ASCII characters outside comments`);
    writeFileSync(file, ascii);
  }
}

if (process.argv[2] === 'cli') {
  await buildCli(process.argv[3] ?? 'dist');
  process.exit(0);
}

/** Moves the build in `from` into `to` file by file, each rename atomic (a file replaced in place),
 * the entry files last so that an entry found names chunks already there; then deletes what the new
 * build does not have. A server or test reading dist/ while a build runs (test/e2e/start.test.ts
 * rebuilds it while deploy.test.ts copies it) never finds it missing or a file half-written; a
 * rebuild of the same tree writes the same names, so it deletes nothing. */
function swapIn(from, to) {
  const files = [];
  const walk = (rel) => {
    for (const e of readdirSync(join(from, rel), { withFileTypes: true })) {
      const r = join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else files.push(r);
    }
  };
  walk('');
  const entry = (f) => /^(main|backup|cli)\.js$/.test(f);
  for (const f of [...files.filter((f) => !entry(f)), ...files.filter(entry)]) {
    mkdirSync(dirname(join(to, f)), { recursive: true });
    renameSync(join(from, f), join(to, f));
  }
  const kept = new Set(files);
  const prune = (rel) => {
    for (const e of readdirSync(join(to, rel), { withFileTypes: true })) {
      const r = join(rel, e.name);
      if (e.isDirectory()) {
        prune(r);
        if (readdirSync(join(to, r)).length === 0) rmSync(join(to, r), { recursive: true });
      } else if (!kept.has(r)) rmSync(join(to, r));
    }
  };
  prune('');
  rmSync(from, { recursive: true, force: true });
}

// Built beside dist/ and moved in by swapIn (above).
const out = `dist.build-${process.pid}`;
rmSync(out, { recursive: true, force: true });
await esbuild.build({
  ...NODE_BUNDLE,
  // The code main.ts imports late (app.ts, after the store starts opening) is a chunk of its own,
  // so the embedded database's worker starts before most of the code is even parsed. Chunks sit
  // beside the entries: src/store/db.ts finds the worker beside whichever file holds it.
  entryPoints: ['src/main.ts', 'src/backup.ts'],
  outdir: out,
  // Native addons are found by their packages at run time; PGlite runs in its worker, which
  // imports it from node_modules.
  external: ['uWebSockets.js', 'uws-fallback', 'msgpackr-extract', 'bufferutil', 'utf-8-validate', '@electric-sql/pglite', '@electric-sql/pglite-socket'],
  banner: { js: REQUIRE_SHIM },
  plugins: [builtinsRequired],
});
await asciiComments(out);
copyFileSync('src/store/pglite-worker.mjs', join(out, 'pglite-worker.mjs'));
await buildCli(out);
swapIn(out, 'dist');
