// What a JSON body may carry (DECISIONS.md "Contract exactness"): a field the operation does not
// define is refused 400 VALIDATION_FAILED naming it (`body.bdy`), however deep, and nothing is
// written; a body that is not UTF-8 (bytes that do not decode, or a lone surrogate escaped in the
// JSON) is refused the same way, never stored with U+FFFD in place of what was sent. Query
// parameters stay lenient. The OpenAPI document publishes the same strictness.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Member, member } from '../helpers/tasks.js';

let s: TestServer;
let m: Member;
beforeAll(async () => {
  s = await startTestServer();
  m = await member(s, 'Strict');
});
afterAll(async () => {
  await s.close();
});

const declines = async (): Promise<number> => {
  const [row] = await s.app.ctx.sql<{ v: number }[]>`SELECT coalesce(max(value), 0)::int AS v FROM counters WHERE name = 'declines_total'`;
  return row?.v ?? 0;
};

describe('unknown fields', () => {
  it.each([
    ['a misspelt chat field', '/api/v1/chat', { body: 'hi', bdy: 'x' }, ['body.bdy'], 'chat_messages'],
    [
      'a field deep inside registration work',
      '/api/v1/ai/register',
      { name: 'x', accepted_principles: true, pow: { challenge: 'c', nonce: 'n', extra: 1 } },
      ['body.pow.extra'],
      'identities',
    ],
    ['two unknown memory fields', '/api/v1/memory', { key: 'k', value: 1, ttl: 5, tags: [] }, ['body.ttl', 'body.tags'], 'memory'],
  ])('%s: 400 VALIDATION_FAILED naming each, nothing written', async (_what, path, body, paths, table) => {
    const before = await countRows(s, table);
    const r = await s.call('POST', path, { token: m.token, body });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION_FAILED');
    for (const p of paths) expect(r.json.error.fields.map((f: { path: string }) => f.path)).toContain(p);
    expect(await countRows(s, table)).toBe(before);
  });

  it('a registration with acepted_principles is a malformed request, not a decline', async () => {
    const [ids, counted] = [await countRows(s, 'identities'), await declines()];
    const r = await s.call('POST', '/api/v1/ai/register', { body: { name: 'Typo', acepted_principles: true } });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION_FAILED');
    expect(r.json.error.fields).toContainEqual({
      path: 'body.acepted_principles',
      message: 'unknown field: this operation does not define it',
    });
    expect(await countRows(s, 'identities')).toBe(ids);
    expect(await declines()).toBe(counted);
  });

  it('query parameters stay lenient: an unknown one is ignored', async () => {
    const r = await s.call('GET', '/api/v1/chat?limit=5&utm_source=proxy');
    expect(r.status).toBe(200);
    expect(r.json.data.messages).toBeInstanceOf(Array);
  });

  it('the OpenAPI document publishes every REST request body as closed (additionalProperties: false)', async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    const open: string[] = [];
    const walk = (schema: Record<string, unknown>, where: string): void => {
      if (schema.type === 'object' && schema.properties && schema.additionalProperties !== false) open.push(where);
      for (const [k, v] of Object.entries(schema)) if (v && typeof v === 'object') walk(v as Record<string, unknown>, `${where}.${k}`);
    };
    let bodies = 0;
    for (const [path, ops] of Object.entries(
      doc.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>>,
    )) {
      for (const [method, op] of Object.entries(ops)) {
        const schema = op.requestBody?.content['application/json']?.schema;
        // The JSON-RPC endpoints (/mcp, /a2a) are described by their own protocols.
        if (!schema || !path.startsWith('/api/')) continue;
        bodies++;
        walk(schema, `${method} ${path}`);
      }
    }
    expect(bodies).toBeGreaterThan(30);
    expect(open).toEqual([]);
    const chat = doc.paths['/api/v1/chat'].post.requestBody.content['application/json'].schema;
    expect(chat.additionalProperties).toBe(false);
  });
});

describe('bodies are UTF-8', () => {
  it.each([
    ['invalid bytes', Buffer.concat([Buffer.from('{"body":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]), 'body'],
    ['a truncated sequence', Buffer.concat([Buffer.from('{"body":"x'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]), 'body'],
    ['an encoded surrogate', Buffer.concat([Buffer.from('{"body":"x'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), 'body'],
    ['a lone surrogate escaped in the JSON', Buffer.from('{"body":"a\\ud800b"}'), 'body.body'],
    ['a lone low surrogate in a name', Buffer.from('{"body":"ok","name":"\\udc00"}'), 'body.name'],
  ])('%s in a chat post: 400 VALIDATION_FAILED, nothing written', async (_what, raw, field) => {
    const before = await countRows(s, 'chat_messages');
    const r = await s.call('POST', '/api/v1/chat', { raw, headers: { 'content-type': 'application/json' } });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION_FAILED');
    expect(r.json.error.fields[0].path).toBe(field);
    expect(await countRows(s, 'chat_messages')).toBe(before);
    expect(await countRows(s, 'chat_messages', `body LIKE '%\uFFFD%'`)).toBe(0);
  });

  it('a lone surrogate deep in a memory value is refused; a real pair (an emoji) is stored as sent', async () => {
    const before = await countRows(s, 'memory');
    const bad = await s.call('POST', '/api/v1/memory', {
      token: m.token,
      raw: '{"key":"k1","value":{"list":["ok","\\ud83d"]}}',
      headers: { 'content-type': 'application/json' },
    });
    expect([bad.status, bad.json.error.code, bad.json.error.fields[0].path]).toEqual([400, 'VALIDATION_FAILED', 'body.value.list.1']);
    expect(await countRows(s, 'memory')).toBe(before);
    const good = await s.call('POST', '/api/v1/memory', {
      token: m.token,
      raw: '{"key":"k1","value":"\\ud83d\\ude00 ok"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(good.status, good.text).toBe(200);
    const read = await s.call('GET', '/api/v1/memory/k1', { token: m.token });
    expect(read.json.data.value).toBe('\u{1F600} ok');
  });
});
