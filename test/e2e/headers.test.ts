// Browsers and headers (docs/security.md): `X-Content-Type-Options: nosniff` on every answer,
// whoever writes it (the pipeline, the lean read path, the tool protocols, refusals before any
// route); `Strict-Transport-Security` on every answer when PUBLIC_URL is https, and never when it
// is not; the stream's and the relay's Origin allow-list (STREAM_ALLOWED_ORIGINS).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.js';
import { rawRequest } from '../helpers/raw.js';
import { type Answer, register, startTestServer, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';

let plain: TestServer;
let tls: TestServer;

beforeAll(async () => {
  plain = await startTestServer();
  // The service itself speaks plain HTTP behind a TLS proxy; PUBLIC_URL says what browsers see.
  tls = await startTestServer({ PUBLIC_URL: 'https://commons.example' });
});
afterAll(async () => {
  await plain?.close();
  await tls?.close();
});

/** Every kind of answer: JSON, lean JSON, errors, documents of each type, protocol answers. */
async function everyKind(s: TestServer): Promise<Record<string, Answer>> {
  const member = await register(s, 'Headers');
  // The first anonymous read takes the address's provisional guest; the next chat read is lean.
  await s.call('GET', '/api/v1/constitution');
  const leanBefore = s.app.fastRead.answered;
  const lean = await s.call('GET', '/api/v1/chat');
  expect(s.app.fastRead.answered).toBe(leanBefore + 1);
  return {
    json: await s.call('GET', '/api/v1/habitat'),
    lean,
    member: await s.call('GET', '/api/v1/ai/me', { token: member.api_token }),
    rss: await s.call('GET', '/feed.xml'),
    html: await s.call('GET', '/'),
    text: await s.call('GET', '/bootstrap.txt'),
    markdown: await s.call('GET', '/llms.txt'),
    notFound: await s.call('GET', '/no/such/path'),
    methodNotAllowed: await s.call('DELETE', '/api/v1/habitat'),
    unauthorized: await s.call('GET', '/api/v1/ai/me', { token: 'cmn_not_a_token' }),
    validation: await s.call('POST', '/api/v1/ai/register', { body: { name: '' } }),
    tooLarge: await s.call('POST', '/api/v1/chat', { raw: 'x'.repeat(70 * 1024), headers: { 'content-type': 'application/json' } }),
    preflight: await s.call('OPTIONS', '/api/v1/chat'),
    head: await s.call('HEAD', '/api/v1/constitution'),
    upgradeRequired: await s.call('GET', '/api/v1/stream'),
    mcp: await s.call('POST', '/mcp', {
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      headers: { accept: 'application/json, text/event-stream' },
    }),
    a2a: await s.call('POST', '/a2a', { body: { jsonrpc: '2.0', id: 1, method: 'no/such/method', params: {} } }),
  };
}

describe('X-Content-Type-Options: nosniff', () => {
  it('is on every kind of answer', async () => {
    const answers = await everyKind(plain);
    expect(answers.lean?.status).toBe(200);
    expect(answers.notFound?.status).toBe(404);
    expect(answers.methodNotAllowed?.status).toBe(405);
    expect(answers.unauthorized?.status).toBe(401);
    expect(answers.validation?.status).toBe(400);
    expect(answers.tooLarge?.status).toBe(413);
    expect(answers.preflight?.status).toBe(204);
    expect(answers.upgradeRequired?.status).toBe(426);
    expect(answers.rss?.headers.get('content-type')).toMatch(/^application\/rss\+xml/);
    expect(answers.html?.headers.get('content-type')).toMatch(/^text\/html/);
    expect(answers.text?.headers.get('content-type')).toMatch(/^text\/plain/);
    for (const [kind, a] of Object.entries(answers)) expect([kind, a.headers.get('x-content-type-options')]).toEqual([kind, 'nosniff']);
  });

  it('is on the answers written before any route: oversized headers (431)', async () => {
    const big = `GET /api/v1/habitat HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(9000)}\r\n\r\n`;
    const out = await rawRequest(plain.app.port, big);
    expect(out).toMatch(/^HTTP\/1\.1 431/);
    expect(out.toLowerCase()).toContain('x-content-type-options: nosniff');
  });
});

describe('Strict-Transport-Security', () => {
  it('is on every answer when PUBLIC_URL is https, for one year', async () => {
    const answers = await everyKind(tls);
    for (const [kind, a] of Object.entries(answers))
      expect([kind, a.headers.get('strict-transport-security')]).toEqual([kind, 'max-age=31536000']);
  });

  it('is never sent when PUBLIC_URL is plain http (a browser would ignore it, and it must not pin a plain origin)', async () => {
    const answers = await everyKind(plain);
    for (const [kind, a] of Object.entries(answers)) expect([kind, a.headers.get('strict-transport-security')]).toEqual([kind, null]);
  });
});

interface Refused {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Opens a real WebSocket with an Origin; resolves with 'open' or the refused upgrade's answer. */
function openWith(url: string, origin: string | undefined): Promise<'open' | Refused> {
  return new Promise((ok) => {
    const ws = new WebSocket(url, origin ? { origin } : {});
    ws.once('open', () => {
      ws.close();
      ok('open');
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    ws.once('error', () => undefined);
  });
}

describe('Origin allow-list for the stream and the relay (STREAM_ALLOWED_ORIGINS)', () => {
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startTestServer({ STREAM_ALLOWED_ORIGINS: 'https://app.example, http://localhost:5173' });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it('by default any Origin may open the stream and the relay (agents are not browsers)', async () => {
    const ws = plain.url.replace(/^http/, 'ws');
    expect(await openWith(`${ws}/api/v1/stream`, 'https://anywhere.example')).toBe('open');
    expect(await openWith(`${ws}/nostr`, 'https://anywhere.example')).toBe('open');
  });

  for (const path of ['/api/v1/stream', '/nostr']) {
    it(`${path}: an Origin not listed gets 403 FORBIDDEN before the upgrade; listed origins and no Origin open`, async () => {
      const ws = strict.url.replace(/^http/, 'ws') + path;
      const sessions = strict.app.stream.sessionCount();
      const refused = await openWith(ws, 'https://evil.example');
      if (refused === 'open') throw new Error('the upgrade was accepted');
      expect(refused.status).toBe(403);
      expect(refused.headers['x-content-type-options']).toBe('nosniff');
      const body = JSON.parse(refused.body);
      expect(body.success).toBe(false);
      expect(body.error.code).toBe('FORBIDDEN');
      expect(body.error.message).toContain('https://evil.example');
      // A look-alike (another port, another scheme, a suffix) is another origin.
      for (const other of ['https://app.example:8443', 'http://app.example', 'https://app.example.evil.example', 'null'])
        expect(await openWith(ws, other)).toMatchObject({ status: 403 });
      if (path === '/api/v1/stream') expect(strict.app.stream.sessionCount()).toBe(sessions);
      expect(await openWith(ws, 'https://app.example')).toBe('open');
      expect(await openWith(ws, 'http://localhost:5173')).toBe('open');
      expect(await openWith(ws, undefined)).toBe('open');
    });
  }

  it('a stream client without Origin (every agent) still authenticates and reads', async () => {
    const m = await register(strict, 'No origin');
    const c = await StreamClient.open(strict.url, { token: m.api_token });
    expect(c.hello.data?.guest ?? null).toBeNull();
    c.ws.close();
  });

  it('a value that is not an origin is refused at start with a clear message', () => {
    for (const bad of ['app.example', 'https://app.example/path', 'ftp://app.example', 'https://user@app.example'])
      expect(() => loadConfig({ STREAM_ALLOWED_ORIGINS: bad })).toThrow(/STREAM_ALLOWED_ORIGINS: .* is not an origin/);
    expect(loadConfig({ STREAM_ALLOWED_ORIGINS: 'https://App.Example:443/' }).streamAllowedOrigins).toEqual(['https://app.example']);
    expect(loadConfig({ STREAM_ALLOWED_ORIGINS: '*' }).streamAllowedOrigins).toBeNull();
    expect(loadConfig({}).streamAllowedOrigins).toBeNull();
  });
});
