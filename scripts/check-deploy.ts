// `npm run check` part: the deployment files parse and lint (docs/operations.md "Container").
// compose.yaml is validated against the Compose Specification's JSON schema, vendored in
// deploy/compose-spec.schema.json (no network at check time); the Dockerfile is linted by
// dockerfile-utils (the VS Code Docker extension's linter) plus the rules this image promises; and
// dist/ must bundle postgres.js with scripts/patch-postgres.mjs's guard and load Node's built-ins
// whose ES view loads a subsystem with require (scripts/build.mjs's builtins-required plugin).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { DockerfileParser } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import yaml from 'js-yaml';
import { ESM_VIEW_LOADS } from './esm-view-loads.mjs';

const root = resolve(import.meta.dirname, '..');
const schemaFile = resolve(root, 'deploy/compose-spec.schema.json');

/** Problems in a compose file: schema violations, then the many-node setup's own requirements. */
export function checkCompose(text: string): string[] {
  const doc = yaml.load(text) as Record<string, unknown>;
  const { $schema: _, ...schema } = JSON.parse(readFileSync(schemaFile, 'utf8'));
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const valid = ajv.compile(schema);
  if (!valid(doc)) return (valid.errors ?? []).map((e) => `compose: ${e.instancePath || '/'} ${e.message}`);
  const problems: string[] = [];
  const services = (doc.services ?? {}) as Record<string, { environment?: Record<string, string>; image?: string }>;
  const nodes = Object.entries(services).filter(([, s]) => s.image?.startsWith('commons'));
  if (nodes.length < 2) problems.push('compose: at least two commons nodes');
  for (const [name, s] of nodes) {
    for (const v of ['DATABASE_URL', 'REDIS_URL', 'TRUST_PROXY']) if (!s.environment?.[v]) problems.push(`compose: ${name} sets no ${v}`);
  }
  if (!Object.values(services).some((s) => /^(haproxy|nginx)[:@]/.test(s.image ?? ''))) problems.push('compose: no HAProxy or nginx in front');
  return problems;
}

export interface Instruction {
  keyword: string;
  args: string;
}

/** The instructions of each stage, in order (the first element of each stage is its FROM). */
export function stages(text: string): Instruction[][] {
  const out: Instruction[][] = [];
  for (const i of DockerfileParser.parse(text).getInstructions()) {
    // The instruction's own text after its keyword: flags (--from, --interval) included.
    const ins = { keyword: i.getKeyword(), args: i.getTextContent().slice(i.getKeyword().length).trim() };
    if (ins.keyword === 'FROM') out.push([ins]);
    else out.at(-1)?.push(ins);
  }
  return out;
}

export function lintDockerfile(text: string): string[] {
  const problems = validate(text).map((d) => `Dockerfile:${d.range.start.line + 1}: ${d.message}`);
  const all = stages(text);
  const last = all.at(-1) ?? [];
  const find = (k: string) => last.filter((i) => i.keyword === k);
  if (all.length < 2) problems.push('Dockerfile: multi-stage build expected (build, runtime)');
  for (const [from] of all) if (!/:[^ ]*\d/.test(from?.args ?? '') || /:latest\b/.test(from?.args ?? '')) problems.push(`Dockerfile: unpinned base image ${from?.args}`);
  const user = find('USER').at(-1)?.args;
  if (!user || user === 'root' || user === '0') problems.push('Dockerfile: the runtime stage must run as a non-root USER');
  if (find('HEALTHCHECK').length !== 1 || !find('HEALTHCHECK')[0]?.args.includes('/healthz')) problems.push('Dockerfile: one HEALTHCHECK on /healthz');
  if (!find('CMD')[0]?.args.trim().startsWith('[')) problems.push('Dockerfile: CMD in exec form, so SIGTERM reaches node');
  if (find('VOLUME').length === 0) problems.push('Dockerfile: DATA_DIR as a VOLUME');
  const prodDeps = all.some((st) => st.some((r) => r.keyword === 'RUN' && r.args.includes('npm ci --omit=dev')));
  const copiesDevDeps = last.some((i) => i.keyword === 'COPY' && /--from=build\b.*node_modules/.test(i.args));
  if (!prodDeps || copiesDevDeps) problems.push('Dockerfile: production dependencies only in the runtime stage');
  // The supported runtime (DECISIONS.md "Runtime"): Node 24 on a glibc 2.38+ Debian (13, trixie).
  for (const [from] of all)
    if (!/^node:24\.[\d.]*-trixie(-slim)?\b/.test(from?.args ?? '')) problems.push(`Dockerfile: ${from?.args} is not the supported runtime (node:24.x-trixie-slim)`);
  // `npm ci --ignore-scripts` skips our postinstall: the postgres.js guard must be applied before
  // the bundle is made, in the stage that makes it.
  const builds = all.filter((st) => st.some((r) => r.keyword === 'RUN' && r.args.includes('npm run build')));
  for (const st of builds) {
    const line = st.map((r) => (r.keyword === 'RUN' ? r.args : '')).join('\n');
    const guard = line.indexOf('node scripts/patch-postgres.mjs');
    if (guard < 0 || guard > line.indexOf('npm run build'))
      problems.push('Dockerfile: the build stage must run `node scripts/patch-postgres.mjs` after `npm ci` and before `npm run build`');
  }
  if (builds.length === 0) problems.push('Dockerfile: no stage runs `npm run build`');
  return problems;
}

/** postgres.js's nextWrite as scripts/patch-postgres.mjs leaves it (esbuild drops the marker
 * comment, so the guard's first statement is what is looked for), and as the driver ships it. */
const GUARDED = /function nextWrite\(fn\) \{\s*if \(!socket\) \{/g;
const UNGUARDED = /function nextWrite\(fn\) \{\s*const x = socket\.write\(/g;

/** Problems with a bundle directory: the bundled postgres.js must carry the null-socket guard. */
export function checkDistGuard(dir: string): string[] {
  if (!existsSync(dir)) return [`${dir}: missing; run \`npm run build\` (npm ci does) before \`npm run check:deploy\``];
  let guarded = 0;
  const problems: string[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    const text = readFileSync(join(dir, f), 'utf8');
    guarded += text.match(GUARDED)?.length ?? 0;
    if (UNGUARDED.test(text)) problems.push(`${dir}/${f}: the bundled postgres.js lacks the nextWrite guard (scripts/patch-postgres.mjs did not run before the build)`);
    UNGUARDED.lastIndex = 0;
  }
  if (guarded === 0 && problems.length === 0) problems.push(`${dir}: no bundled postgres.js nextWrite found, so its guard cannot be checked`);
  return problems;
}

/** An ES module import of a built-in whose ES view loads a subsystem the server never uses
 * (`import http from "node:http"`: undici, HTTP/2, web streams; scripts/esm-view-loads.mjs). */
const IMPORT = /^import\b[^;]*?["']([^"']+)["']/gm;
const LOADS = new Set(ESM_VIEW_LOADS.flatMap((n) => [n, `node:${n}`]));

/** Problems with a bundle directory: every built-in is loaded with require (scripts/build.mjs). */
export function checkDistBuiltins(dir: string): string[] {
  const problems: string[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    for (const [, name] of readFileSync(join(dir, f), 'utf8').matchAll(IMPORT))
      if (name && LOADS.has(name))
        problems.push(`${dir}/${f}: imports ${name} as an ES module (scripts/build.mjs's builtins-required plugin did not run)`);
  }
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const problems = [
    ...checkCompose(readFileSync(resolve(root, 'compose.yaml'), 'utf8')),
    ...lintDockerfile(readFileSync(resolve(root, 'Dockerfile'), 'utf8')),
    ...checkDistGuard(resolve(root, 'dist')),
    ...(existsSync(resolve(root, 'dist')) ? checkDistBuiltins(resolve(root, 'dist')) : []),
  ];
  for (const p of problems) console.error(p);
  if (problems.length > 0) process.exit(1);
  console.log('compose.yaml and Dockerfile: valid; dist/ bundles the guarded postgres.js and requires its built-ins');
}
