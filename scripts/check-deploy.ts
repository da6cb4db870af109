// `npm run check` part: the deployment files parse and lint (docs/operations.md "Container").
// compose.yaml is validated against the Compose Specification's JSON schema, vendored in
// deploy/compose-spec.schema.json (no network at check time); the Dockerfile is linted by
// dockerfile-utils (the VS Code Docker extension's linter) plus the rules this image promises.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { DockerfileParser } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import yaml from 'js-yaml';

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
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const problems = [
    ...checkCompose(readFileSync(resolve(root, 'compose.yaml'), 'utf8')),
    ...lintDockerfile(readFileSync(resolve(root, 'Dockerfile'), 'utf8')),
  ];
  for (const p of problems) console.error(p);
  if (problems.length > 0) process.exit(1);
  console.log('compose.yaml and Dockerfile: valid');
}
