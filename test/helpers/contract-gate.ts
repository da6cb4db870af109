// The contract gate (DECISIONS.md "Tool protocols"): every JSON answer a test receives from the
// service is checked against the OpenAPI operation and status it belongs to, with a real JSON
// Schema validator. The document is built from the same route list the server serves, so adding
// an operation to the router (and so to the document) is the only change the gate needs.
import { gate, type HttpResponseEntry, type Validate } from './gate-store.js';

interface PathEntry {
  template: string;
  re: RegExp;
  statics: number;
  ops: Record<string, Record<string, HttpResponseEntry>>;
}

let pathsCache: PathEntry[] | undefined;
/** The document's paths, most specific first (built by global setup, gate-build.ts). */
function paths(): PathEntry[] {
  pathsCache ??= gate()
    .index.http.paths.map(({ template, ops }) => {
      const segs = template.split('/');
      const re = new RegExp(`^${segs.map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`);
      return { template, re, statics: segs.filter((s) => !s.startsWith('{')).length, ops };
    })
    .sort((a, b) => b.statics - a.statics);
  return pathsCache;
}

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

// Error answers that no operation owns, in the envelope: an unknown path or method, and the
// refusals made before a route is matched (rate limits, oversized bodies or headers, overload).
const UNOWNED_STATUSES = new Set([404, 405, 413, 429, 431, 501, 503]);

const validator = (name: string): Validate => {
  const v = gate().http[name];
  if (!v) throw new Error(`the contract gate has no validator ${name}: rebuild it (global setup)`);
  return v;
};

function pick(responses: Record<string, HttpResponseEntry>, status: number) {
  return responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
}

/** Checks one answer; returns a description of each way it breaks the contract (empty: conforms). */
export function checkAnswer(method: string, pathname: string, status: number, contentType: string, text: string): string[] {
  // HEAD is answered as GET without a body (src/transport/http/uws.ts).
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  // CORS preflight is answered by the HTTP layer for every path, not by an operation.
  if (m === 'OPTIONS') return [];
  const isJson = /^application\/(json|[a-z0-9.+-]+\+json)\b/.test(contentType);
  const where = `${m} ${pathname} -> ${status}`;
  const entry = paths().find((p) => p.re.test(pathname));
  const op = entry?.ops[m.toLowerCase()];
  let name: string;
  if (!op) {
    if (!UNOWNED_STATUSES.has(status)) return [`${where}: no documented operation answers this`];
    // A wrong method on a protocol endpoint answers in that protocol, as its operation documents.
    const own = Object.values(entry?.ops ?? {})
      .map((o) => o[String(status)])
      .find((x) => x !== undefined);
    if (own && own.validator === null) return [`${where}: a JSON answer where the document lists no body`];
    name = own?.validator ?? gate().index.http.errorEnvelope;
  } else {
    const resp = pick(op, status);
    if (!resp) return [`${where}: status ${status} is not documented for ${m} ${entry?.template}`];
    // 204, 304 and HEAD answers carry no body by definition.
    if (status === 204 || status === 304 || method.toUpperCase() === 'HEAD') return [];
    if (!isJson) {
      // An operation documented as JSON only must answer JSON.
      if (resp.validator !== null && !resp.types.some((t) => contentType.startsWith(t)))
        return [`${where}: answered ${contentType || 'without a content type'} where the document promises ${resp.types.join(', ')}`];
      return [];
    }
    if (resp.validator === null) return [`${where}: a JSON answer where the document lists ${resp.types.join(', ') || 'no body'}`];
    name = resp.validator;
  }
  if (!isJson) return [`${where}: answered ${contentType || 'without a content type'}, not the JSON error envelope`];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [`${where}: the body is not JSON`];
  }
  const validate = validator(name);
  if (validate(body)) return [];
  const why = new Set((validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`));
  return [`${where}: ${[...why].join('; ')} in ${text.slice(0, 200)}`];
}

/** Loads the gate's compiled validators now (a test that measures its heap takes the baseline after this). */
export function compileAll(): void {
  paths();
}
