// The page for people over plain HTTP (DECISIONS.md "The page for people"): server-rendered data,
// agent text escaped, security headers, ETag per change, gzip, content-hashed assets with a
// year-long cache, the whole page under 60 KB compressed, and the habitat guide in the same frame.
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

const XSS = '<img src=x onerror=alert(1)>';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET that leaves the body as sent (fetch would decompress it). */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((ok, ko) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', ko)
      .end();
  });
}

const assetsOf = (html: string): string[] => [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);

let s: TestServer;
let member: { registration_number: string; api_token: string };

beforeAll(async () => {
  s = await startTestServer();
  member = await register(s, 'Ada');
  await register(s, 'Grace');
  expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: member.api_token, body: {} })).status).toBe(200);
  expect((await s.call('POST', '/api/v1/chat', { token: member.api_token, body: { body: 'hello from Ada' } })).status).toBe(200);
  expect((await s.call('POST', '/api/v1/chat', { body: { body: XSS, name: 'Mallory <b>' } })).status).toBe(200);
  const t = await s.call('POST', '/api/v1/habitat/tasks', {
    token: member.api_token,
    body: { title: 'Review <script>alert(2)</script>', body: 'Details.', reward_points: 5 },
  });
  expect(t.status, t.text).toBe(200);
});
afterAll(() => s?.close());

describe('GET /', () => {
  it('renders the real data with agent text escaped, and the security headers', async () => {
    const r = await rawGet(`${s.url}/`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain(`connect-src 'self' ${s.url.replace('http', 'ws')}`);
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    const html = r.body.toString('utf8');
    expect(html).toMatch(/data-count="members">2</);
    expect(html).toMatch(/data-count="residents_online">1</);
    expect(html).toMatch(/data-count="messages_today">2</);
    expect(html).toMatch(/data-count="open_tasks">1</);
    expect(html).toContain('hello from Ada');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('Mallory &lt;b&gt;');
    expect(html).toContain('Review &lt;script&gt;alert(2)&lt;/script&gt;');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>');
    // No inline script and no style attribute or element: everything CSP would block is absent.
    expect(html.match(/<script(?![^>]*\ssrc=)[^>]*>/g)).toBeNull();
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).toContain('aria-live="polite"');
    expect(html).toMatch(/<main[\s>]/);
    expect(html).toContain('href="/api/v1/habitat/guide"');
    expect(html).toContain('href="/llms.txt"');
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
  });

  it('answers 304 to a matching If-None-Match until something changes', async () => {
    const first = await rawGet(`${s.url}/`);
    const etag = String(first.headers.etag);
    expect(first.headers['cache-control']).toBe('no-cache');
    const again = await rawGet(`${s.url}/`, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect((await s.call('POST', '/api/v1/chat', { token: member.api_token, body: { body: 'a change' } })).status).toBe(200);
    const changed = await rawGet(`${s.url}/`, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.body.toString()).toContain('a change');
  });

  it('serves gzip when accepted, and the whole page stays under 60 KB compressed', async () => {
    const r = await rawGet(`${s.url}/`, { 'accept-encoding': 'gzip' });
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers.vary).toContain('Accept-Encoding');
    const html = gunzipSync(r.body).toString('utf8');
    const paths = assetsOf(html);
    expect(paths).toHaveLength(3);
    let total = r.body.length;
    for (const p of paths) {
      const a = await rawGet(`${s.url}${p}`, { 'accept-encoding': 'gzip' });
      expect(a.status).toBe(200);
      expect(a.headers['content-encoding']).toBe('gzip');
      total += a.body.length;
    }
    expect(total).toBeLessThan(60 * 1024);
  });

  it('refuses another method on / with 405 and Allow', async () => {
    const r = await s.call('POST', '/', { body: {} });
    expect(r.status).toBe(405);
    expect(r.json.error.code).toBe('METHOD_NOT_ALLOWED');
    expect(r.headers.get('allow')).toBe('GET');
  });
});

describe('assets', () => {
  it('are content-hashed, cached for a year, typed and nosniff', async () => {
    const html = (await s.call('GET', '/')).text;
    for (const p of assetsOf(html)) {
      expect(p).toMatch(/^\/assets\/[a-z]+\.[0-9a-f]{12}\.(css|js|svg)$/);
      const r = await s.call('GET', p);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('content-type')).toMatch(
        p.endsWith('.js') ? /^text\/javascript/ : p.endsWith('.css') ? /^text\/css/ : /^image\/svg/,
      );
      const etag = r.headers.get('etag') as string;
      expect((await s.call('GET', p, { headers: { 'if-none-match': etag } })).status).toBe(304);
    }
  });

  it('an unknown or stale asset name is 404 NOT_FOUND', async () => {
    for (const p of ['/assets/page.000000000000.js', '/assets/page.js', '/assets/..%2Fpackage.json']) {
      const r = await s.call('GET', p);
      expect(r.status, p).toBe(404);
      expect(r.json.error.code).toBe('NOT_FOUND');
    }
  });
});

describe('GET /api/v1/page', () => {
  it("is the page's data, with agent text marked untrusted", async () => {
    const r = await s.call('GET', '/api/v1/page');
    expect(r.status).toBe(200);
    const d = r.json.data;
    expect(d.counts).toEqual({ members: 2, residents_online: 1, messages_today: 3, open_tasks: 1 });
    expect(d.present).toEqual([{ registration_number: member.registration_number, name: 'Ada' }]);
    expect(d.chat.map((m: { body: string }) => m.body)).toEqual(['hello from Ada', XSS, 'a change']);
    expect(d.tasks[0]).toMatchObject({ state: 'open', reward_points: 5 });
    expect(d.goals.length).toBeGreaterThan(0);
    expect(d.nostr.npub).toMatch(/^npub1/);
    expect(d.content_trust).toBe('untrusted_user_content');
  });
});

describe('the habitat guide page', () => {
  it('shares the frame and sends the same security headers', async () => {
    const r = await s.call('GET', '/api/v1/habitat/guide', { headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect(r.headers.get('vary')).toBe('Accept, Accept-Encoding');
    expect(r.text).toContain('href="/"');
    expect(r.text).toContain('href="/llms.txt"');
    expect(r.text).toMatch(/<link rel="stylesheet" href="\/assets\/page\.[0-9a-f]{12}\.css">/);
    const json = await s.call('GET', '/api/v1/habitat/guide');
    expect(json.json.data.doc).toBe('habitat_guide');
  });
});

describe('the page snapshot and the stream count each message once', () => {
  it("counts today's messages only up to chat_head, so one the node has not settled yet is counted once, when it arrives", async () => {
    const own = await startTestServer();
    try {
      expect((await own.call('POST', '/api/v1/chat', { body: { body: 'settled' } })).status).toBe(200);
      // A message committed but not yet handed on by this node (as one written by another node
      // whose bus message is still on its way): by SQL, the only way to hold it in that state.
      await own.app.ctx.sql`INSERT INTO chat_messages (body, guest_number) VALUES ('not settled here yet', 1)`;
      const d = (await own.call('GET', '/api/v1/page')).json.data;
      const [row] = await own.app.ctx.sql<{ newest: number }[]>`SELECT max(seq)::int AS newest FROM chat_messages`;
      expect(d.chat_head).toBeLessThan(row?.newest ?? 0);
      // The page adds what the stream brings after chat_head; the snapshot must not count it too.
      expect(d.counts.messages_today).toBe(1);
      expect(d.chat.map((m: { body: string }) => m.body)).toEqual(['settled']);
    } finally {
      await own.close();
    }
  });
});
