// The registry this project is built against serves only the linux-x64 builds of packages that
// ship per-platform binaries as optional dependencies (rollup, esbuild, biome, msgpackr-extract):
// the others answer 404, so `npm install` leaves them out of package-lock.json, and `npm ci` then
// refuses the lock as out of sync. This adds an entry for each missing optional platform package
// (version, optional, and the parent's os/cpu unknown -> no fetch on this platform), so `npm ci`
// accepts the lock. Run it after any `npm install` that rewrites the lock:
//   node scripts/lock-optional-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const pkgs = lock.packages;
let added = 0;
for (const [path, meta] of Object.entries(pkgs)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    const here = `${base}node_modules/${name}`;
    const top = `node_modules/${name}`;
    if (pkgs[here] || pkgs[top]) continue;
    const guess = /(?:^|[-/])(android|darwin|freebsd|linux|win32|openbsd|netbsd|sunos|aix|openharmony)/.exec(name)?.[1];
    const cpu = /(arm64|x64|arm|ia32|ppc64|riscv64|s390x|loong64|mips64el|wasm32|ppc)(?:-|$)/.exec(name.split('/').pop())?.[1];
    pkgs[top] = {
      version: version.replace(/^[\^~]/, ''),
      dev: meta.dev,
      optional: true,
      ...(guess ? { os: [guess] } : {}),
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(/musl/.test(name) ? { libc: ['musl'] } : /gnu|linux-x64$/.test(name) ? {} : {}),
    };
    if (!pkgs[top].dev) delete pkgs[top].dev;
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
lock.packages = sorted;
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} optional platform entries`);
