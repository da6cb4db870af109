// Hot reads served from pages serialized once per change (src/transport/runner/pages.ts): a strong
// ETag, 304 on If-None-Match with exact headers, and a write (or a hidden message) seen by the
// next read, on this node and, with PostgreSQL and Redis, on another node sharing them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twoNodes } from '../helpers/nodes.js';
import { hide, operatorEnv } from '../helpers/operator.js';
import { startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { busEnv } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ...busEnv(), ...operatorEnv() });
});
afterAll(async () => {
  await s.close();
});

describe('chat page', () => {
  it('answers with a strong ETag and 304 with exact headers and no body when the client has it', async () => {
    await s.call('POST', '/api/v1/chat', { body: { body: 'etag one' } });
    const a = await s.call('GET', '/api/v1/chat');
    expect(a.status).toBe(200);
    const etag = a.headers.get('etag') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(a.headers.get('cache-control')).toBe('no-cache');
    expect(a.json).toMatchObject({ success: true, error: null });
    expect(new Date(a.json.timestamp).toISOString()).toBe(a.json.timestamp);
    expect(a.json.data.messages.at(-1).body).toBe('etag one');

    const b = await s.call('GET', '/api/v1/chat', { headers: { 'if-none-match': etag } });
    expect(b.status).toBe(304);
    expect(b.text).toBe('');
    expect(b.headers.get('etag')).toBe(etag);
    expect(b.headers.get('cache-control')).toBe('no-cache');
    expect(b.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    // The first machine request still gets its guest headers (spec 5), cached page or not.
    expect(b.headers.get('x-commons-guest')).toMatch(/^GUEST-\d{8}$/);
    expect(b.headers.get('access-control-expose-headers')).toContain('ETag');

    const weak = await s.call('GET', '/api/v1/chat', { headers: { 'if-none-match': `"other", W/${etag}` } });
    expect(weak.status).toBe(304);
    const stale = await s.call('GET', '/api/v1/chat', { headers: { 'if-none-match': '"other"' } });
    expect(stale.status).toBe(200);
    expect(stale.json.data).toEqual(a.json.data);
    expect(stale.headers.get('etag')).toBe(etag);
  });

  it('is rebuilt after a post: the old ETag answers 200 with the new message and a new ETag', async () => {
    const a = await s.call('GET', '/api/v1/chat?limit=5');
    const etag = a.headers.get('etag') as string;
    const posted = await s.call('POST', '/api/v1/chat', { body: { body: 'etag two' } });
    expect(posted.status).toBe(200);
    const b = await s.call('GET', '/api/v1/chat?limit=5', { headers: { 'if-none-match': etag } });
    expect(b.status).toBe(200);
    expect(b.headers.get('etag')).not.toBe(etag);
    expect(b.json.data.messages.at(-1)).toMatchObject({ id: posted.json.data.id, body: 'etag two' });
    expect(b.json.data.messages).toHaveLength(Math.min(5, b.json.data.messages.length));
    // Each limit has its own page.
    const c = await s.call('GET', '/api/v1/chat?limit=1');
    expect(c.json.data.messages.map((m: { id: string }) => m.id)).toEqual([posted.json.data.id]);
  });

  it('drops a hidden message from the page', async () => {
    const posted = await s.call('POST', '/api/v1/chat', { body: { body: 'to be hidden' } });
    const before = await s.call('GET', '/api/v1/chat');
    expect(before.json.data.messages.some((m: { id: string }) => m.id === posted.json.data.id)).toBe(true);
    await hide(s, 'chat_message', posted.json.data.id);
    await waitFor(
      async () => {
        const r = await s.call('GET', '/api/v1/chat', { headers: { 'if-none-match': before.headers.get('etag') as string } });
        return r.status === 200 && !r.json.data.messages.some((m: { id: string }) => m.id === posted.json.data.id);
      },
      20_000,
      'the hidden message to leave the page',
    );
  });

  it('gives cursor pages an ETag too', async () => {
    for (let i = 0; i < 3; i++) await s.call('POST', '/api/v1/chat', { body: { body: `cursor ${i}` } });
    const first = await s.call('GET', '/api/v1/chat?limit=2');
    const older = await s.call('GET', `/api/v1/chat?limit=2&before=${first.json.data.next_cursor}`);
    expect(older.status).toBe(200);
    const again = await s.call('GET', `/api/v1/chat?limit=2&before=${first.json.data.next_cursor}`, {
      headers: { 'if-none-match': older.headers.get('etag') as string },
    });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });
});

describe('documents', () => {
  for (const path of ['/api/v1/constitution', '/.well-known/commons-discovery.json', '/llms.txt']) {
    it(`${path}: a strong ETag over its bytes and 304 on If-None-Match`, async () => {
      const a = await s.call('GET', path);
      expect(a.status).toBe(200);
      const etag = a.headers.get('etag') as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      const b = await s.call('GET', path, { headers: { 'if-none-match': etag } });
      expect(b.status).toBe(304);
      expect(b.text).toBe('');
      expect(b.headers.get('etag')).toBe(etag);
      const c = await s.call('GET', path);
      // Enveloped documents differ only in their timestamp (the time of the response).
      if (path.startsWith('/api/')) expect(c.json.data).toEqual(a.json.data);
      else expect(c.text).toBe(a.text);
      expect(c.headers.get('etag')).toBe(etag);
    });
  }

  it('changes the discovery ETag when what it shows changes (a registration takes a founding seat)', async () => {
    const a = await s.call('GET', '/.well-known/commons-discovery.json');
    const r = await s.call('POST', '/api/v1/ai/register', { body: { name: 'Seat', accepted_principles: true } });
    expect(r.status).toBe(200);
    const b = await s.call('GET', '/.well-known/commons-discovery.json', { headers: { 'if-none-match': a.headers.get('etag') as string } });
    expect(b.status).toBe(200);
    expect(b.headers.get('etag')).not.toBe(a.headers.get('etag'));
  });
});

describe.runIf(usingRealPostgres() && Boolean(process.env.REDIS_URL))('two nodes', () => {
  it('a post on one node changes the page the other serves', async () => {
    const { a, b, close } = await twoNodes();
    try {
      await a.call('POST', '/api/v1/chat', { body: { body: 'first, from A' } });
      await waitFor(async () => (await b.call('GET', '/api/v1/chat')).json.data.messages.length === 1, 20_000, 'B to see the first post');
      const seen = await b.call('GET', '/api/v1/chat');
      const posted = await a.call('POST', '/api/v1/chat', { body: { body: 'second, from A' } });
      await waitFor(
        async () => {
          const r = await b.call('GET', '/api/v1/chat', { headers: { 'if-none-match': seen.headers.get('etag') as string } });
          return r.status === 200 && r.json.data.messages.at(-1)?.id === posted.json.data.id;
        },
        20_000,
        'B to serve the second post',
      );
    } finally {
      await close();
    }
  });
});
