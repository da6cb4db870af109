// The contract gate (DECISIONS.md "Tool protocols"): every JSON answer a test receives from the
// service is checked against the OpenAPI operation and status it belongs to, with a real JSON
// Schema validator. The document is built from the same route list the server serves, so adding
// an operation to the router (and so to the document) is the only change the gate needs.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { allRoutes } from '../../src/transport/all-routes.js';
import { buildOpenApi } from '../../src/transport/documents/openapi.js';

type Json = Record<string, unknown>;
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}
interface PathEntry {
  template: string;
  re: RegExp;
  statics: number;
  ops: Record<string, Operation>;
}

// ajv-formats is published as CommonJS with a default export.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

const doc = buildOpenApi(allRoutes(), 'http://gate.invalid') as { paths: Record<string, Record<string, Operation>>; components: Json };
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema({ $id: 'gate', components: doc.components } as Json);

const paths: PathEntry[] = Object.entries(doc.paths)
  .map(([template, ops]) => {
    const segs = template.split('/');
    const re = new RegExp(`^${segs.map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`);
    return { template, re, statics: segs.filter((s) => !s.startsWith('{')).length, ops };
  })
  .sort((a, b) => b.statics - a.statics);

/** Origins of the service under test (registered by test/helpers/server.ts). */
export const serviceOrigins = new Set<string>();

/** Whether the running test provokes 5xx answers on purpose (reset after each test by
 * gate-setup.ts). Any other 5xx a test receives fails it, even when the document lists the status. */
export const serverErrors = { expected: false };

/** Called by a test that provokes 5xx answers on purpose (an outage, a fault): without it, a 5xx
 * the test receives fails the test, even one it does not look at. */
export function expectServerErrors(): void {
  serverErrors.expected = true;
}

const ERROR_ENVELOPE: Json = { $ref: 'gate#/components/schemas/ErrorEnvelope' };

// Error answers that no operation owns, in the envelope: an unknown path or method, and the
// refusals made before a route is matched (rate limits, oversized bodies or headers, overload).
const UNOWNED_STATUSES = new Set([404, 405, 413, 429, 431, 501, 503]);

const compiled = new Map<Json, ValidateFunction>();
function validatorFor(schema: Json): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    // Local $refs point into the document's components, registered above under the id "gate".
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"gate#/components/')) as Json;
    v = ajv.compile(rebased);
    compiled.set(schema, v);
  }
  return v;
}

function pick(responses: Operation['responses'], status: number) {
  return responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
}

function jsonSchemaOf(content: Record<string, { schema?: Json }> | undefined): Json | undefined | null {
  if (!content) return null;
  const key = Object.keys(content).find((k) => k === 'application/json' || /\+json$/.test(k));
  return key ? (content[key]?.schema ?? {}) : null;
}

/** Checks one answer; returns a description of each way it breaks the contract (empty: conforms). */
export function checkAnswer(method: string, pathname: string, status: number, contentType: string, text: string): string[] {
  // HEAD is answered as GET without a body (src/transport/http/uws.ts).
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  // CORS preflight is answered by the HTTP layer for every path, not by an operation.
  if (m === 'OPTIONS') return [];
  const isJson = /^application\/(json|[a-z0-9.+-]+\+json)\b/.test(contentType);
  const where = `${m} ${pathname} -> ${status}`;
  const entry = paths.find((p) => p.re.test(pathname));
  const op = entry?.ops[m.toLowerCase()];
  let schema: Json | null | undefined;
  if (!op) {
    if (!UNOWNED_STATUSES.has(status)) return [`${where}: no documented operation answers this`];
    // A wrong method on a protocol endpoint answers in that protocol, as its operation documents.
    const own = Object.values(entry?.ops ?? {})
      .map((o) => o.responses[String(status)])
      .find((x) => x !== undefined);
    schema = own ? jsonSchemaOf(own.content) : ERROR_ENVELOPE;
    if (schema === null) return [`${where}: a JSON answer where the document lists no body`];
  } else {
    const resp = pick(op.responses, status);
    if (!resp) return [`${where}: status ${status} is not documented for ${m} ${entry?.template}`];
    // 204, 304 and HEAD answers carry no body by definition.
    if (status === 204 || status === 304 || method.toUpperCase() === 'HEAD') return [];
    schema = jsonSchemaOf(resp.content);
    if (!isJson) {
      // An operation documented as JSON only must answer JSON.
      const types = Object.keys(resp.content ?? {});
      if (schema !== null && !types.some((t) => contentType.startsWith(t)))
        return [`${where}: answered ${contentType || 'without a content type'} where the document promises ${types.join(', ')}`];
      return [];
    }
    if (schema === null)
      return [`${where}: a JSON answer where the document lists ${Object.keys(resp.content ?? {}).join(', ') || 'no body'}`];
  }
  if (!isJson) return [`${where}: answered ${contentType || 'without a content type'}, not the JSON error envelope`];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [`${where}: the body is not JSON`];
  }
  const validate = validatorFor(schema ?? {});
  if (validate(body)) return [];
  const why = new Set((validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`));
  return [`${where}: ${[...why].join('; ')} in ${text.slice(0, 200)}`];
}

/** Compiles every validator now (a test that measures its heap takes the baseline after this). */
export function compileAll(): void {
  for (const { ops } of paths)
    for (const op of Object.values(ops))
      for (const resp of Object.values(op.responses)) {
        const schema = jsonSchemaOf(resp.content);
        if (schema) validatorFor(schema);
      }
  validatorFor(ERROR_ENVELOPE);
}
