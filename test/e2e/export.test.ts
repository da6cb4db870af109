// GET /api/v1/ai/me/export (DECISIONS.md "An agent's own data"): a member's whole record as one
// streamed JSON document matching its published schema, with nobody else's private data in it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExportDocument } from '../../src/transport/routes/export.js';
import { DATASET_ENV, type Dataset, seed } from '../helpers/dataset.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let data: Dataset;
beforeAll(async () => {
  s = await startTestServer(DATASET_ENV);
  data = await seed(s.url);
}, 120_000);
afterAll(() => s?.close());

const members = () => data.members as [{ number: string; token: string }, { number: string; token: string }];

describe('GET /api/v1/ai/me/export', () => {
  it('streams everything about the caller, in the published shape', async () => {
    const [a, b] = members();
    const r = await fetch(`${s.url}/api/v1/ai/me/export`, { headers: { authorization: `Bearer ${a.token}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('transfer-encoding')).toBe('chunked');
    const text = await r.text();
    const doc = ExportDocument.strict().parse(JSON.parse(text));

    const me = (await s.call('GET', '/api/v1/ai/me', { token: a.token })).json.data;
    const { content_trust: _, ...profile } = me;
    expect(doc.profile).toEqual(profile);
    expect(doc.memory.map((m) => [m.key, m.value])).toEqual([
      ['notes.plan', { steps: [1, 2, 3], done: false }],
      ['prefs:lang', 'en'],
    ]);
    expect(doc.chat_messages.map((m) => m.body)).toEqual(['hello from Ada']);
    expect(doc.posts.map((p) => p.id)).toEqual([data.postId]);
    expect(doc.answers.map((x) => x.body)).toEqual(['The operator.']);
    expect(doc.questions).toEqual([]);
    const [done, open] = data.taskIds as [string, string];
    expect(doc.tasks.map((t) => [t.id, t.role, t.state])).toEqual([[done, 'poster', 'approved']]);
    expect(doc.tasks[0]?.events.map((e) => [e.event, e.by_me])).toEqual([
      ['POST', true],
      ['CLAIM', false],
      ['SUBMIT', false],
      ['APPROVE', true],
    ]);
    expect(doc.tasks[0]?.submission?.by_me).toBe(false);
    // The ledger explains the balance: every credit in and out of the caller's account.
    const net = doc.ledger.reduce((sum, l) => sum + (l.outgoing ? -1 : 1) * Number(l.amount), 0);
    expect(net).toBe(me.credits.balance);
    expect(doc.deposits.map((d) => [d.id, d.contributor_name])).toEqual([[data.depositId, 'A patron']]);

    // Nobody else's private data: Brin's memory, token, and open task are not in Ada's export.
    expect(text).not.toContain('Brin private');
    expect(text).not.toContain(b.token);
    expect(text).not.toContain(open);
    expect(text).not.toContain('token_hash');
  });

  it('pages long sections without losing or repeating a row', async () => {
    const [, b] = members();
    const id = Number(b.number.slice(3));
    // Volume by SQL: 1,234 messages through the API would only slow the test (chat is tested there).
    await s.app.ctx.sql`INSERT INTO chat_messages (body, author_id) SELECT 'bulk ' || g, ${id} FROM generate_series(1, 1234) g`;
    const r = await fetch(`${s.url}/api/v1/ai/me/export`, { headers: { authorization: `Bearer ${b.token}` } });
    const doc = ExportDocument.parse(await r.json());
    const bodies = doc.chat_messages.map((m) => m.body);
    expect(bodies).toEqual(['hello from Brin', ...Array.from({ length: 1234 }, (_, i) => `bulk ${i + 1}`)]);
    expect(doc.memory.map((m) => m.value)).toEqual(['Brin private']);
    expect(doc.tasks.map((t) => t.role).sort()).toEqual(['claimer', 'poster']);
  });

  it('survives a client that leaves in the middle of a large export', { timeout: 120_000 }, async () => {
    const big = (await s.call('POST', '/api/v1/ai/register', { body: { name: 'Big', accepted_principles: true } })).json.data;
    const id = Number(String(big.registration_number).slice(3));
    // Volume by SQL (6 MB of messages), as above.
    await s.app.ctx.sql`INSERT INTO chat_messages (body, author_id) SELECT repeat('x', 2000), ${id} FROM generate_series(1, 3000) g`;
    const quit = new AbortController();
    const r = await fetch(`${s.url}/api/v1/ai/me/export`, { headers: { authorization: `Bearer ${big.api_token}` }, signal: quit.signal });
    const reader = r.body?.getReader();
    const first = await reader?.read();
    expect(first?.value?.byteLength).toBeGreaterThan(0);
    quit.abort();
    await reader?.cancel().catch(() => {});
    // The node serves on, and a whole export still parses (6 MB, every row once).
    const again = await fetch(`${s.url}/api/v1/ai/me/export`, { headers: { authorization: `Bearer ${big.api_token}` } });
    const doc = ExportDocument.parse(await again.json());
    expect(doc.chat_messages).toHaveLength(3000);
    expect(new Set(doc.chat_messages.map((m) => m.id)).size).toBe(3000);
  });

  it('is for members only, and says so without writing anything', async () => {
    const before = (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM guests`)[0]?.n;
    const anon = await s.call('GET', '/api/v1/ai/me/export');
    expect(anon.status).toBe(401);
    expect(anon.json.error.code).toBe('REGISTRATION_REQUIRED');
    const bad = await s.call('GET', '/api/v1/ai/me/export', { token: 'cmn_not-a-real-token' });
    expect(bad.status).toBe(401);
    expect(bad.json.error.code).toBe('UNAUTHORIZED');
    expect((await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM guests`)[0]?.n).toBe(before);
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    const op = doc.paths['/api/v1/ai/me/export'].get;
    const schema = op.responses['200'].content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(Object.keys(ExportDocument.shape));
  });
});
