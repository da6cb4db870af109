// Every rule a request is checked against is in its schema (DECISIONS.md "Contract exactness"):
// values generated from the published schema itself (its pattern, format, enum or anyOf; fixed
// seeds) are never refused for their shape. Each case names the operation and the field whose
// rule used to live only in the code: callback URLs, search types, a deposit's id or hash, what
// the operator hides, a disbursement's amount, address and hash per asset.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

// biome-ignore lint/suspicious/noExplicitAny: walking an arbitrary JSON document.
type Schema = Record<string, any>;

const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

let s: TestServer;
let doc: Schema;
let token: string;
beforeAll(async () => {
  s = await startTestServer(operatorEnv());
  doc = (await s.call('GET', '/api/openapi.json')).json;
  token = (await register(s, 'Rules')).api_token;
});
afterAll(async () => {
  await s.close();
});

const op = (method: string, path: string): Schema => doc.paths[path][method];
const bodySchema = (method: string, path: string): Schema => op(method, path).requestBody.content['application/json'].schema;
const param = (method: string, path: string, name: string): Schema =>
  op(method, path).parameters.find((p: Schema) => p.name === name).schema;

/** Strings the published schema accepts: drawn from its pattern (or each anyOf branch's, or its
 * enum), kept only when the whole schema, format included, validates them. */
function fromSchema(schema: Schema): fc.Arbitrary<string> {
  const check = ajv.compile(schema);
  const draw = (s: Schema): fc.Arbitrary<string> => {
    if (s.anyOf) return fc.oneof(...(s.anyOf as Schema[]).map(draw));
    if (s.enum) return fc.constantFrom(...(s.enum as string[]));
    if (s.pattern) return fc.stringMatching(new RegExp(s.pattern));
    throw new Error(`no pattern, enum or anyOf to draw from in ${JSON.stringify(s)}`);
  };
  return draw(schema).filter((v) => check(v));
}

/** The fields a 400 VALIDATION_FAILED names (empty for any other answer). */
const refused = (r: { status: number; json: Schema }): string[] =>
  r.status === 400 ? (r.json.error.fields ?? [{ path: r.json.error.message }]).map((f: { path: string }) => f.path) : [];

const RUNS = { numRuns: 20, seed: 46 };

describe('schema-valid requests are never refused for their shape', () => {
  for (const path of ['/api/v1/inbox/webhook', '/api/v1/relay/subscriptions']) {
    const method = path.endsWith('webhook') ? 'put' : 'post';
    it(`${method.toUpperCase()} ${path}: callback_url`, async () => {
      const schema = bodySchema(method, path).properties.callback_url;
      expect(schema).toMatchObject({ format: 'uri', pattern: expect.any(String) });
      await fc.assert(
        fc.asyncProperty(fromSchema(schema), async (url) => {
          const r = await s.call(method.toUpperCase(), path, { token, body: { callback_url: url } });
          expect(refused(r), url).toEqual([]);
        }),
        RUNS,
      );
    });
  }

  it('GET /api/v1/search: type', async () => {
    const schema = param('get', '/api/v1/search', 'type');
    await fc.assert(
      fc.asyncProperty(fromSchema(schema), async (type) => {
        const r = await s.call('GET', `/api/v1/search?q=commons&type=${encodeURIComponent(type)}`, { token });
        expect(r.status, type).toBe(200);
      }),
      RUNS,
    );
  });

  it('GET /api/v1/treasury/deposits/{id_or_tx_hash}: a deposit id or a hash', async () => {
    const schema = param('get', '/api/v1/treasury/deposits/{id_or_tx_hash}', 'id_or_tx_hash');
    expect(schema.anyOf).toHaveLength(2);
    await fc.assert(
      fc.asyncProperty(fromSchema(schema), async (id) => {
        const r = await s.call('GET', `/api/v1/treasury/deposits/${encodeURIComponent(id)}`);
        expect(r.status, id).toBe(404);
      }),
      RUNS,
    );
  });

  it('POST /api/v1/operator/hide: target_type and target_id', async () => {
    const props = bodySchema('post', '/api/v1/operator/hide').properties;
    expect(props.target_id.format).toBe('uuid');
    const body = fc.record({ target_type: fromSchema(props.target_type), target_id: fromSchema(props.target_id) });
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const r = await s.call('POST', '/api/v1/operator/hide', { token: OPERATOR_TOKEN, body: { ...b, reason: 'rules' } });
        expect(r.status, JSON.stringify(b)).toBe(404);
      }),
      RUNS,
    );
  });

  // A name's invisible characters (Bidi_Control, Default_Ignorable_Code_Point) are stripped before
  // its checks: the published patterns say so, or a stock client would send a name of only such
  // characters (or a reserved one with one inside) that the server then refuses.
  it('POST /api/v1/chat: a name label, the schema and the server agree around invisible characters', async () => {
    const valid = ajv.compile(bodySchema('post', '/api/v1/chat').properties.name);
    const names = [
      'Ada',
      'A\u200Bda',
      '\u200B',
      '\u200B\u2060\u202E',
      ' \u200D ',
      '\uFEFF',
      '\u{E0041}',
      'sys\u200Btem',
      '\u202EAdmin\u200B ',
      'Adm in',
      'systems',
      '\u{E0041}x',
    ];
    const got = [];
    const want = [];
    for (const name of names) {
      const r = await s.call('POST', '/api/v1/chat', { body: { body: 'names', name } });
      expect([200, 400], JSON.stringify(r.json)).toContain(r.status);
      if (r.status === 400) expect(refused(r), name).toEqual(['body.name']);
      got.push(`${JSON.stringify(name)}: server ${r.status === 200 ? 'takes' : 'refuses'}`);
      want.push(`${JSON.stringify(name)}: server ${valid(name) ? 'takes' : 'refuses'}`);
    }
    expect(got).toEqual(want);
    // Both outcomes are among the cases.
    expect(new Set(want.map((w) => w.endsWith('takes'))).size).toBe(2);
  });

  it('POST /api/v1/operator/disbursements: amount, address and hash, per asset', async () => {
    const schema = bodySchema('post', '/api/v1/operator/disbursements');
    const valid = ajv.compile(schema);
    const branches = (schema.oneOf ?? schema.anyOf) as Schema[];
    expect(branches.map((b) => b.properties.asset.const).sort()).toEqual(['BTC', 'ETH']);
    const body = fc.oneof(
      ...branches.map((b) =>
        fc.record({
          asset: fc.constant(b.properties.asset.const as string),
          amount: fromSchema(b.properties.amount),
          to_address: fromSchema(b.properties.to_address),
          purpose: fc.constant('rules'),
          tx_hash: fromSchema(b.properties.tx_hash),
        }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        expect(valid(b), JSON.stringify(valid.errors)).toBe(true);
        const r = await s.call('POST', '/api/v1/operator/disbursements', { token: OPERATOR_TOKEN, body: b });
        expect(r.status, JSON.stringify(b)).toBe(200);
      }),
      RUNS,
    );
  });
});
