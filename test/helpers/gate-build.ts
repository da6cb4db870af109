// Builds the contract gate once per run (vitest global setup, test/helpers/global-setup.ts): the
// OpenAPI and AsyncAPI documents from the same route list and schemas the server serves them
// from, and every schema the gates check against compiled by Ajv into one standalone CommonJS
// module. Test files load that module and a small index (gate-store.ts) instead of importing the
// whole service and compiling validators per file. The files are named after a hash of their
// sources (src/, the lockfile, the gate's own code), so a run whose sources did not change
// reuses the previous run's module without loading the service at all.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { _, Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';
import addFormatsModule from 'ajv-formats';
import { GATE_CACHE_DIR, type GateIndex, type HttpResponseEntry, type Json, jsonSchemaOf } from './gate-store.js';

// ajv-formats is published as CommonJS with a default export.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
// Also CommonJS: its function is the module's default export.
const standalone = (standaloneCode as unknown as { default: (ajv: Ajv | Ajv2020, refs: Record<string, string>) => string }).default;

interface OpenApiDoc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: Json }> }> }>>;
  components: Json;
}
interface AsyncApiDoc {
  channels: { stream: { messages: Record<string, { payload: Json }> } };
}

const BASE = 'https://gate.invalid/';

/** Adds each distinct schema once under a short export name; returns the name. */
class Registry {
  readonly exports: Record<string, string> = {};
  private readonly byText = new Map<string, string>();
  constructor(
    private readonly ajv: Ajv | Ajv2020,
    private readonly prefix: string,
  ) {}
  add(schema: Json, rebase: (text: string) => string = (t) => t): string {
    const text = rebase(JSON.stringify(schema));
    let name = this.byText.get(text);
    if (!name) {
      name = `${this.prefix}${this.byText.size}`;
      this.byText.set(text, name);
      // Absolute ids under one base, so the relative `gate#/components/...` refs resolve.
      this.ajv.addSchema({ $id: `${BASE}${name}`, ...(JSON.parse(text) as Json) });
      this.exports[name] = `${BASE}${name}`;
    }
    return name;
  }
}

function httpIndex(doc: OpenApiDoc, reg: Registry): GateIndex['http'] {
  // Local $refs point into the document's components, registered under the id "gate".
  const rebase = (t: string) => t.replaceAll('"#/components/', '"gate#/components/');
  const paths = Object.entries(doc.paths).map(([template, ops]) => ({
    template,
    ops: Object.fromEntries(
      Object.entries(ops).map(([method, op]) => [
        method,
        Object.fromEntries(
          Object.entries(op.responses).map(([status, resp]): [string, HttpResponseEntry] => {
            const schema = jsonSchemaOf(resp.content);
            return [status, { types: Object.keys(resp.content ?? {}), validator: schema ? reg.add(schema, rebase) : schema }];
          }),
        ),
      ]),
    ),
  }));
  return { paths, errorEnvelope: reg.add({ $ref: '#/components/schemas/ErrorEnvelope' }, rebase) };
}

function streamIndex(doc: AsyncApiDoc, reg: Registry): GateIndex['stream'] {
  const messages: Record<string, string> = {};
  const eventBranches: Record<string, string> = {};
  for (const [key, message] of Object.entries(doc.channels.stream.messages)) {
    if (!key.startsWith('server_')) continue;
    messages[key.slice('server_'.length)] = reg.add(message.payload);
  }
  for (const branch of (doc.channels.stream.messages.server_event?.payload.oneOf as Json[] | undefined) ?? [])
    if (typeof branch.title === 'string') eventBranches[branch.title] = reg.add(branch);
  return { messages, eventBranches };
}

const ROOT = join(import.meta.dirname, '..', '..');

/** What the documents are built from: every source file, the locked dependencies and this
 * builder. The same inputs give the same files, so a run finds the last run's without building. */
function sourcesHash(): string {
  const h = createHash('sha256');
  const files = readdirSync(join(ROOT, 'src'), { recursive: true })
    .map(String)
    .filter((f) => /\.(ts|mts|mjs|js|json)$/.test(f))
    .sort();
  for (const f of files) h.update(f).update(readFileSync(join(ROOT, 'src', f)));
  for (const f of ['package-lock.json', 'test/helpers/gate-build.ts', 'test/helpers/gate-store.ts']) h.update(readFileSync(join(ROOT, f)));
  return h.digest('hex').slice(0, 16);
}

/** Builds (or finds) the gate's module and index for the current sources; returns the index path. */
export async function buildGate(): Promise<string> {
  const hash = sourcesHash();
  const dir = join(GATE_CACHE_DIR, hash);
  const indexFile = join(dir, 'index.json');
  if (existsSync(indexFile)) return indexFile;
  // Only now the service's modules: building the documents needs the route table and schemas.
  const { allRoutes } = await import('../../src/transport/all-routes.js');
  const { buildOpenApi } = await import('../../src/transport/documents/openapi.js');
  const { buildAsyncApi } = await import('../../src/transport/ws/asyncapi.js');
  const openapi = buildOpenApi(allRoutes(), 'http://gate.invalid') as unknown as OpenApiDoc;
  // AsyncAPI 3.0's default schema format is a superset of JSON Schema draft-07.
  const asyncapi = buildAsyncApi('http://gate.invalid') as unknown as AsyncApiDoc;

  const options = { strict: false, allErrors: true, validateFormats: true, code: { source: true, formats: undefined as never } } as const;
  const http = new Ajv2020(options);
  const stream = new Ajv(options);
  for (const a of [http, stream]) {
    // The generated module requires the formats from ajv-formats by name (resolved from node_modules).
    (a.opts.code as { formats?: unknown }).formats = standaloneFormats();
    (addFormats as unknown as (x: Ajv | Ajv2020) => void)(a);
  }
  http.addSchema({ $id: `${BASE}gate`, components: openapi.components } as Json);
  const httpReg = new Registry(http, 'h');
  const streamReg = new Registry(stream, 's');
  const index: GateIndex = { hash, http: httpIndex(openapi, httpReg), stream: streamIndex(asyncapi, streamReg) };

  const tmp = `${dir}.${process.pid}`;
  mkdirSync(tmp, { recursive: true });
  try {
    writeFileSync(join(tmp, 'http.cjs'), standalone(http, httpReg.exports));
    writeFileSync(join(tmp, 'stream.cjs'), standalone(stream, streamReg.exports));
    writeFileSync(join(tmp, 'index.json'), JSON.stringify(index));
    renameSync(tmp, dir);
  } catch (e) {
    // Another run built the same documents at the same moment: its files are the same.
    if (!existsSync(indexFile)) throw e;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  // Older sources' builds: kept a day (another run may still read one), then removed.
  for (const other of readdirSync(GATE_CACHE_DIR)) {
    const path = join(GATE_CACHE_DIR, other);
    if (other !== hash && Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { recursive: true, force: true });
  }
  return indexFile;
}

/** The code Ajv writes for `formats`: the generated module requires ajv-formats' own table. */
const standaloneFormats = () => _`require("ajv-formats/dist/formats").fullFormats`;
