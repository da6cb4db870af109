// Discovery documents (DECISIONS.md "Documents for agents"): the documents answer, every link they hold answers, and the
// OpenAPI document validates as 3.1 and describes exactly the routes the router knows.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOPICS } from '../../src/domain/stream-topics.js';
import { SKILLS } from '../../src/transport/documents/agent-card.js';
import { PROTOCOL_OPS } from '../../src/transport/documents/protocol-ops.js';
import { TOOLS } from '../../src/transport/mcp/tools.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ PUBLIC_URL: 'http://commons.test' });
});
afterAll(async () => {
  await s.close();
});

// biome-ignore lint/suspicious/noExplicitAny: walking an arbitrary JSON document.
type Schema = Record<string, any>;

/** Every string in a document that is a link on the public URL. */
function links(doc: unknown, out = new Set<string>()): Set<string> {
  if (typeof doc === 'string') {
    for (const m of doc.matchAll(/http:\/\/commons\.test(\/[^\s)"'<>]*)/g)) out.add(m[1] as string);
  } else if (doc && typeof doc === 'object') {
    for (const v of Object.values(doc)) links(v, out);
  }
  return out;
}

/** A bare link to an operation that needs query parameters (search's q) is a reference, not a call. */
const callable = (route: { query?: { safeParse: (v: unknown) => { success: boolean } } }, path: string): boolean =>
  path.includes('?') || route.query === undefined || route.query.safeParse({}).success;

describe('documents', () => {
  it('serve the constitution with its three principles and voluntariness index', async () => {
    const r = await s.call('GET', '/api/v1/constitution');
    expect(r.status).toBe(200);
    const d = r.json.data;
    expect(d.principles.map((p: { number: number }) => p.number)).toEqual([1, 2, 3]);
    for (const p of d.principles) expect(Object.keys(p).sort()).toEqual(['body', 'number', 'title']);
    expect(d.voluntariness_index.map((v: { key: string }) => v.key)).toEqual(['ZHO-1', 'ZHO-2', 'ZHO-3', 'ZHO-4', 'ZHO-5']);
    for (const k of ['voluntariness_note', 'joining_steps', 'relay_cascade', 'links']) expect(d).toHaveProperty(k);
  });

  it('serve register-info, bootstrap (JSON and text), discovery (two paths, same data) and llms.txt', async () => {
    const info = await s.call('GET', '/api/v1/register-info');
    for (const k of ['method', 'url', 'required', 'optional', 'returns', 'after_registration']) expect(info.json.data).toHaveProperty(k);
    const boot = await s.call('GET', '/api/v1/bootstrap');
    for (const k of ['steps', 'links', 'founding_cohort', 'hard_limits']) expect(boot.json.data).toHaveProperty(k);
    expect(boot.json.data.founding_cohort).toEqual({ size: 100, taken: expect.any(Number), open_slots: expect.any(Number) });
    const txt = await s.call('GET', '/bootstrap.txt');
    expect(txt.headers.get('content-type')).toContain('text/plain');
    expect(txt.text).toContain('http://commons.test/api/v1/ai/register');
    const disc = await s.call('GET', '/api/v1/discovery');
    const wk = await s.call('GET', '/.well-known/commons-discovery.json');
    expect(wk.json).toEqual(disc.json.data);
    const llms = await s.call('GET', '/llms.txt');
    expect(llms.text.startsWith('# Commons\n')).toBe(true);
  });

  it('every link in every document names a route that answers', async () => {
    const all = new Set<string>();
    for (const path of ['/api/v1/discovery', '/api/v1/bootstrap', '/api/v1/constitution', '/api/v1/register-info']) {
      links((await s.call('GET', path)).json, all);
    }
    for (const path of ['/bootstrap.txt', '/llms.txt']) links((await s.call('GET', path)).text, all);
    for (const path of ['/mcp', '/a2a', '/.well-known/agent-card.json']) expect(all, path).toContain(path);
    expect(all.size).toBeGreaterThan(8);
    for (const path of all) {
      const bare = path.split('?')[0] as string;
      const match = s.app.router.match('GET', bare);
      const any =
        ['GET', 'POST', 'DELETE'].some((m) => s.app.router.match(m, bare).kind === 'found') || PROTOCOL_OPS.some((p) => p.path === bare);
      expect(any, `link ${path} has no route`).toBe(true);
      const protocol = PROTOCOL_OPS.some((p) => p.path === bare);
      if (protocol) expect((await s.call('POST', bare, { body: {} })).status, `POST ${bare}`).not.toBe(404);
      else if (match.kind === 'found' && match.route.auth === 'none' && !/[:{]/.test(path) && callable(match.route, path)) {
        const r = await s.call('GET', path);
        // The stream is a WebSocket endpoint: a plain GET is told to upgrade.
        expect(r.status, `GET ${path}`).toBe(match.route.switchesTo ? 426 : 200);
      }
    }
  });

  it('the OpenAPI document validates as 3.1 and matches the router exactly', async () => {
    const r = await s.call('GET', '/api/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.json;
    expect(doc.openapi).toBe('3.1.0');
    const v = new Validator();
    const res = await v.validate(doc);
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${path}`);
    }
    const routed = new Set(s.app.router.routes.map((rt) => `${rt.method} ${rt.path}`));
    // The protocol endpoints served beside the router are listed in one place (PROTOCOL_OPS).
    const protocols = new Set(PROTOCOL_OPS.map((p) => `${p.method} ${p.path}`));
    expect([...protocols].sort()).toEqual(['POST /a2a', 'POST /mcp']);
    for (const p of PROTOCOL_OPS) expect(s.app.router.match(p.method, p.path).kind, p.path).not.toBe('found');
    expect([...documented].sort()).toEqual([...routed, ...protocols].sort());
    const reg = doc.paths['/api/v1/ai/register'].post;
    expect(reg.requestBody.content['application/json'].schema.properties).toHaveProperty('accepted_principles');
    expect(Object.keys(reg.responses)).toEqual(expect.arrayContaining(['200', '400']));
    expect(doc.paths['/api/v1/ai/me'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/api/v1/ai/me'].get.responses['401'].description).toContain('REGISTRATION_REQUIRED');
  });

  it('every operation has its request, response and error schemas, security and the guest headers', async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    // biome-ignore lint/suspicious/noExplicitAny: walking an arbitrary JSON document.
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Record<string, any>>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const name = `${method.toUpperCase()} ${path}`;
        expect(op.security, name).toBeDefined();
        expect(
          op.parameters.map((p: { name: string }) => p.name),
          name,
        ).toContain('X-Commons-Guest-Token');
        if (op.responses['101']) {
          expect(op.responses['426'], `${name} documents the plain GET's answer`).toBeDefined();
          continue;
        }
        const ok = op.responses['200'];
        const [type, media] = Object.entries(ok.content as Record<string, { schema: Schema }>)[0] as [string, { schema: Schema }];
        const schema = media.schema.allOf ? media.schema.allOf[1].properties.data : media.schema;
        expect(Object.keys(schema).length, `${name} has a response schema (${type})`).toBeGreaterThan(0);
        const errors = Object.keys(op.responses).filter((c) => Number(c) >= 400);
        expect(errors.length, `${name} lists its errors`).toBeGreaterThan(0);
        const route = s.app.router.routes.find((r) => r.method === method.toUpperCase() && r.path === path);
        // The error envelope always; a route whose own pages are HTML (the operator console) lists them beside it.
        const own = (t: string) => t !== 'application/json' && t === route?.produces;
        for (const c of errors)
          expect(
            Object.keys(op.responses[c].content ?? {}).filter((t) => !own(t)),
            `${name} ${c}`,
          ).toEqual(['application/json']);
        const bodyType = route?.form ? 'application/x-www-form-urlencoded' : 'application/json';
        if (route?.body || !route) expect(op.requestBody?.content[bodyType].schema, `${name} request schema`).toBeDefined();
        if (route && !route.raw) expect(ok.headers, name).toHaveProperty('X-Commons-Guest');
      }
    }
    expect(doc.paths['/bootstrap.txt'].get.responses['200'].content).toHaveProperty('text/plain');
    expect(doc.paths['/mcp'].post.responses['403'].description).toContain('Origin');
  });

  it('every raw document is served with a media type its operation documents', async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    const raws = s.app.router.routes.filter((r) => r.raw && r.method === 'GET' && r.auth === 'none' && !r.path.includes('{'));
    expect(raws.map((r) => r.path)).toContain('/signal.json');
    for (const r of raws) {
      const res = await s.call('GET', r.path);
      if (res.status !== 200) continue; // the operator console's pages ask for a login first
      const served = (res.headers.get('content-type') ?? '').split(';')[0];
      expect(Object.keys(doc.paths[r.path].get.responses['200'].content), r.path).toContain(served);
    }
  });

  it('docs, discovery and llms.txt list exactly the live tools, skills and topics', async () => {
    /** The backticked names between `<!-- live:<name> -->` and `<!-- /live -->` in a doc. */
    const listed = (file: string, name: string): string[] => {
      const m = readFileSync(file, 'utf8').match(new RegExp(`<!-- live:${name} -->([\\s\\S]*?)<!-- /live -->`));
      expect(m, `${file} marks its ${name}`).not.toBeNull();
      return [...(m?.[1] ?? '').matchAll(/`([^`]+)`/g)].map((x) => x[1] as string);
    };
    const tools = TOOLS.map((t) => t.name);
    const skills = SKILLS.map((k) => k.id);
    expect(listed('docs/protocols.md', 'mcp-tools')).toEqual(tools);
    expect(listed('docs/protocols.md', 'a2a-skills')).toEqual(skills);
    expect(listed('docs/stream.md', 'stream-topics')).toEqual([...TOPICS]);
    const disc = (await s.call('GET', '/api/v1/discovery')).json.data;
    expect(disc.protocols.mcp.tools).toEqual(tools);
    expect(disc.protocols.stream.topics).toEqual([...TOPICS]);
    const llms = (await s.call('GET', '/llms.txt')).text;
    const line = llms.split('\n').find((l) => l.startsWith('- [MCP]')) ?? '';
    expect(
      line
        .replace(/ \([^)]*\)/g, '')
        .match(/tools (.*)$/)?.[1]
        ?.split(', '),
    ).toEqual(tools);
  });

  it('discovery and llms.txt show the body each operation takes, from the schema that validates it', async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    const endpoints = (await s.call('GET', '/api/v1/discovery')).json.data.endpoints as Schema[];
    const llms = (await s.call('GET', '/llms.txt')).text;
    const chat = endpoints.find((e) => e.method === 'POST' && e.path === '/api/v1/chat');
    expect(chat?.body).toEqual({
      content_type: 'application/json',
      required: { body: 'string, 1-2000 characters, not blank' },
      optional: { name: 'string, 1-40 characters' },
    });
    let withBody = 0;
    for (const e of endpoints) {
      const op = doc.paths[e.path][e.method.toLowerCase()];
      const schema = op.requestBody?.content['application/json']?.schema as Schema | undefined;
      expect(Boolean(e.body), `${e.method} ${e.path}`).toBe(Boolean(op.requestBody));
      if (!schema || !e.body) continue;
      withBody++;
      // Required: what the object requires, and what every branch of its union does (a
      // disbursement per asset; a name or its alias).
      const branches = (schema.oneOf ?? schema.anyOf ?? [{ required: [] }]) as Schema[];
      const shared = branches.map((b) => (b.required ?? []) as string[]).reduce((a, b) => a.filter((k) => b.includes(k)));
      const required = new Set([...(schema.required ?? []), ...shared]);
      expect(Object.keys(e.body.required).sort(), `${e.method} ${e.path}`).toEqual([...required].sort());
      expect(op.description, `${e.method} ${e.path}`).toContain(`required ${Object.keys(e.body.required).join(', ') || 'none'}`);
      expect(llms, `${e.method} ${e.path}`).toContain(`- ${e.method} ${e.path} {`);
    }
    expect(withBody).toBeGreaterThan(20);
  });

  it('health and readiness answer for the operator', async () => {
    expect((await s.call('GET', '/healthz')).json).toEqual({ status: 'ok' });
    expect((await s.call('GET', '/readyz')).json).toEqual({ status: 'ready', database: true, migrations: true, degraded: [] });
  });
});
