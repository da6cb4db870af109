// The schema-valid fuzz (DECISIONS.md "Contract exactness"): for every operation in the live
// OpenAPI document, 20 requests generated from its own schemas by json-schema-faker (path
// parameters, query, headers and body; fixed seeds, so a failure replays), each checked with ajv
// against the schema it came from before it is sent. A schema-valid request may be refused for
// state (an unknown id, a conflict, a credential, time), never for its shape: the file fails on
// any 400 but POW_REQUIRED (every other 400 code names a shape), any 413 or 415, any 5xx but a
// capability the host has not configured (501 NOT_CONFIGURED), a JSON-RPC envelope refused as
// malformed, and, through the contract gate (test/helpers/gate-setup.ts), any answer outside the
// document. Members' operations carry a registered member's token, the operator's the operator
// token; optional credentials alternate with none. Ids the fuzz itself created are mixed into
// later path parameters, so lookups reach past 404.

import { JSONSchemaFaker } from 'json-schema-faker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectServerErrors } from '../helpers/contract-gate.js';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { samplesAjv, seeded } from '../helpers/samples.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

// biome-ignore lint/suspicious/noExplicitAny: walking an arbitrary JSON document.
type Schema = Record<string, any>;

const PER_OPERATION = 20;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
// Credentials are the test's to choose (below), not the generator's: a random guest token is
// only ever refused as unknown.
const CREDENTIAL_HEADERS = new Set(['x-commons-guest-token', 'authorization']);
/** 400 codes that depend on state, not on the request's shape (DECISIONS.md "Registration work"). */
const STATE_400 = new Set(['POW_REQUIRED']);
/** JSON-RPC codes that say the envelope itself is malformed, or (A2A) its version header. */
const RPC_SHAPE = new Set([-32700, -32600, -32009]);

const ajv = samplesAjv({ allErrors: true });

/** A seed per operation from its name (FNV-1a), so adding an operation moves no other's seed. */
function seedOf(name: string): number {
  let h = 0x811c9dc5;
  for (const c of name) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/** The generator's options for one operation. They are the module's, shared with every file a
 * worker runs (test/helpers/doors.ts caps strings at 40 characters, which cuts a 64-hex pattern
 * short), so each operation starts from the defaults, with its own seed. */
function fakerFor(name: string): void {
  JSONSchemaFaker.option({
    ...JSONSchemaFaker.option.getDefaults(),
    // Bodies stay small: the 64 KiB body limit is a documented refusal (413), not what this probes.
    maxItems: 3,
    random: seeded(seedOf(name)),
  });
}

const checkers = new Map<Schema, ReturnType<typeof ajv.compile>>();
const checker = (schema: Schema) => {
  let c = checkers.get(schema);
  if (!c) {
    c = ajv.compile(schema);
    checkers.set(schema, c);
  }
  return c;
};

/** One value the schema accepts, from the generator; redrawn while ajv disagrees with it. */
function fake(schema: Schema, what: string): unknown {
  const valid = checker(schema);
  let last: unknown;
  for (let i = 0; i < 50; i++) {
    last = JSONSchemaFaker.generate(structuredClone(schema) as never);
    if (valid(last)) return last;
  }
  throw new Error(`json-schema-faker drew no value valid for ${what} in 50 tries: ${JSON.stringify(last)} ${JSON.stringify(valid.errors)}`);
}

interface Op {
  method: string;
  template: string;
  op: Schema;
}

let s: TestServer;
let doc: Schema;
/** The member whose token members' operations carry (it follows a rotation). */
let member: { number: string; token: string };
/** Another member: the one numbers in paths name, so revoking or blocking it spends nothing the fuzz needs. */
let other: string;
/** Ids created so far, by the collection path that made them. */
const made = new Map<string, string[]>();

beforeAll(async () => {
  s = await startTestServer(operatorEnv());
  doc = (await s.call('GET', '/api/openapi.json')).json;
  const m = await register(s, 'Fuzz');
  member = { number: m.registration_number, token: m.api_token };
  other = (await register(s, 'Other')).registration_number;
});
afterAll(async () => {
  await s?.close();
});

const ops = (): Op[] => {
  const out: Op[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Schema>))
    for (const method of METHODS) if (item[method]) out.push({ method: method.toUpperCase(), template, op: item[method] });
  return out;
};

/** Which credential the operation takes on its i-th request. */
function credential(op: Schema, i: number): string | undefined {
  const schemes = ((op.security ?? doc.security ?? []) as Schema[]).map((r) => Object.keys(r)[0] ?? 'none');
  if (schemes.includes('operatorAuth')) return OPERATOR_TOKEN;
  if (!schemes.includes('none')) return member.token;
  return i % 2 === 1 ? member.token : undefined;
}

/** A real value for a path parameter where the fuzz has one (odd requests), else the generated one. */
function pathValue(template: string, name: string, generated: unknown, i: number): string {
  if (i % 2 === 1) {
    if (name === 'registration_number') return other;
    const collection = template.slice(0, template.indexOf(`/{${name}}`));
    const ids = made.get(collection);
    if (ids?.length) return ids[i % ids.length] as string;
  }
  return String(generated);
}

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function build({ method, template, op }: Op, i: number): Sent {
  let path = template;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const p of (op.parameters ?? []) as Schema[]) {
    if (p.in === 'header' && CREDENTIAL_HEADERS.has(String(p.name).toLowerCase())) continue;
    // Optional parameters are sent on about half the requests, as the generator does for properties.
    if (!p.required && (i + p.name.length) % 2 === 0) continue;
    const v = fake(p.schema, `${method} ${template} ${p.in} ${p.name}`);
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(pathValue(template, p.name, v, i)));
    else if (p.in === 'query') query.set(p.name, String(v));
    else if (p.in === 'header') headers[p.name] = String(v);
  }
  // What the document says the operation answers, as a client generated from it would ask (the
  // MCP endpoint refuses a client that cannot take both of its answers' types: 406).
  const types = Object.values((op.responses ?? {}) as Record<string, Schema>).flatMap((r) => Object.keys(r.content ?? {}));
  if (types.length > 0) headers.accept = [...new Set(types)].join(', ');
  const token = credential(op, i);
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  const content = op.requestBody?.content as Record<string, Schema> | undefined;
  if (content) {
    const [type, media] = Object.entries(content)[0] as [string, Schema];
    const value = fake(media.schema, `${method} ${template} body`);
    headers['content-type'] = type;
    body =
      type === 'application/x-www-form-urlencoded'
        ? new URLSearchParams(Object.entries(value as Record<string, unknown>).map(([k, v]): [string, string] => [k, String(v)])).toString()
        : JSON.stringify(value);
  }
  const q = query.toString();
  return { method, path: q ? `${path}?${q}` : path, headers, ...(body !== undefined ? { body } : {}) };
}

/** The answer's JSON: the body, or the first event's data of a stream (MCP answers a JSON-RPC call
 * as an event stream when the client takes one). */
function parsed(type: string, text: string): Schema | null {
  const data = type.startsWith('text/event-stream') ? /^data: ?(.*)$/m.exec(text)?.[1] : text;
  try {
    return data === undefined ? null : JSON.parse(data);
  } catch {
    return null;
  }
}

/** What is wrong with the answer to a schema-valid request (undefined: a fair answer), in words
 * that group alike refusals: status, code, message and the fields named. */
function shapeRefusal(status: number, json: Schema | null, text: string): string | undefined {
  const e = json?.error as Schema | undefined;
  const said = e ? `${e.code} ${e.message ?? ''}${e.fields ? ` ${JSON.stringify(e.fields)}` : ''}` : text.slice(0, 200);
  if (status === 400 && !STATE_400.has(e?.code ?? '')) return `400 ${said}`;
  if (status === 413 || status === 415) return `${status} ${said}`;
  if (status >= 500 && !(status === 501 && e?.code === 'NOT_CONFIGURED')) return `${status} ${said}`;
  if (json?.jsonrpc === '2.0' && typeof e?.code === 'number' && RPC_SHAPE.has(e.code)) return `JSON-RPC ${said}`;
  return undefined;
}

describe('schema-valid requests, 20 per operation, are never refused for their shape', () => {
  it('covers every operation in the live document', () => {
    expect(ops().length).toBeGreaterThan(100);
  });

  // The operations are only known once the server answers: one test walks them in document order
  // (creations before the lookups that reuse their ids) and reports every refusal at once.
  it('answers each generated request for state only, within the document', { timeout: 180_000 }, async () => {
    // Each kind of refusal once, with the first request that met it (the seeds replay the rest).
    const refusals = new Map<string, string>();
    let sent = 0;
    const answered = new Map<string, number[]>();
    for (const o of ops()) {
      const name = `${o.method} ${o.template}`;
      fakerFor(name);
      for (let i = 0; i < PER_OPERATION; i++) {
        const req = build(o, i);
        const res = await fetch(s.url + req.path, {
          method: req.method,
          headers: req.headers,
          ...(req.body !== undefined ? { body: req.body } : {}),
          redirect: 'manual',
        });
        sent++;
        const cls = `${o.method} ${o.template}`;
        answered.set(cls, [...(answered.get(cls) ?? []), res.status]);
        const text = await res.text();
        const json = parsed(res.headers.get('content-type') ?? '', text);
        if (res.status === 501 && json?.error?.code === 'NOT_CONFIGURED') expectServerErrors();
        const wrong = shapeRefusal(res.status, json, text);
        const kind = wrong && `${name} -> ${wrong}`;
        if (kind && !refusals.has(kind)) refusals.set(kind, `#${i}: ${req.method} ${req.path} ${req.body ?? ''}`.slice(0, 600));
        // Follow the state the fuzz itself changes: the ids it created, a rotated token.
        const data = json?.data as Schema | undefined;
        if (res.status === 200 && o.method === 'POST' && typeof data?.id === 'string' && !o.template.includes('{')) {
          made.set(o.template, [...(made.get(o.template) ?? []), data.id]);
        }
        if (res.status === 200 && o.template === '/api/v1/ai/token/rotate' && typeof data?.api_token === 'string') {
          member.token = data.api_token;
        }
      }
    }
    expect(sent).toBe(ops().length * PER_OPERATION);
    expect(Object.fromEntries(refusals)).toEqual({});
    // Not a pass by refusing everything: most operations did what was asked at least once (the
    // rest refuse a random id, or are the console's forms without a session).
    const served = [...answered.values()].filter((statuses) => statuses.some((st) => st < 300)).length;
    expect(served / answered.size).toBeGreaterThan(0.7);
  });
});

describe('every answer is typed', () => {
  /** Paths in the document's answers to an object that says nothing of its fields. */
  function openObjects(x: unknown, at: string, out: string[]): string[] {
    if (!x || typeof x !== 'object') return out;
    const o = x as Schema;
    if (o.type === 'object' && !o.properties && o.additionalProperties && Object.keys(o.additionalProperties).length === 0) out.push(at);
    for (const [k, v] of Object.entries(o)) openObjects(v, `${at}/${k}`, out);
    return out;
  }

  it('has no answer object without fields where the shape is known', () => {
    const open = Object.entries(doc.paths as Record<string, Schema>).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, op]) => openObjects((op as Schema).responses, `${method.toUpperCase()} ${path}`, [])),
    );
    // The audit log's detail is each action's own record: open by design.
    expect(open).toEqual([expect.stringMatching(/^GET \/api\/v1\/operator\/audit\/200\/.*\/detail$/)]);
  });
});
