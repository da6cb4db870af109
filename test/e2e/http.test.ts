// The HTTP layer's refusals: every bad request gets its exact status, code and `next`,
// and nothing is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from '../helpers/db.js';
import { rawRequest } from '../helpers/raw.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const identities = (): Promise<number> => countRows(s, 'identities');

describe('refusals', () => {
  it('invalid JSON: 400 INVALID_JSON', async () => {
    const before = await identities();
    const r = await s.call('POST', '/api/v1/ai/register', {
      raw: '{"name": "x", accepted_principles: true',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_JSON');
    expect(r.json.error.next.path).toBe('/api/openapi.json');
    expect(await identities()).toBe(before);
  });

  it('a body with __proto__ or constructor.prototype: 400 INVALID_JSON', async () => {
    const before = await identities();
    for (const raw of [
      '{"name":"p","accepted_principles":true,"__proto__":{"admin":true}}',
      '{"name":"p","accepted_principles":true,"constructor":{"prototype":{"admin":true}}}',
    ]) {
      const r = await s.call('POST', '/api/v1/ai/register', { raw, headers: { 'content-type': 'application/json' } });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('INVALID_JSON');
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(await identities()).toBe(before);
  });

  it('a body nested deeper than 32 levels: 400 INVALID_JSON', async () => {
    const raw = `{"name":"d","accepted_principles":true,"purpose":${'['.repeat(40)}${']'.repeat(40)}}`;
    const r = await s.call('POST', '/api/v1/ai/register', { raw, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_JSON');
  });

  it('wrong content type: 415 UNSUPPORTED_MEDIA_TYPE; a missing one is read as JSON; +json is accepted', async () => {
    const before = await identities();
    const r = await s.call('POST', '/api/v1/ai/register', {
      raw: 'name=x&accepted_principles=true',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(415);
    expect(r.json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(await identities()).toBe(before);
    const bare = await rawRequest(
      s.app.port,
      'POST /api/v1/ai/register HTTP/1.1\r\nHost: x\r\nContent-Length: 44\r\nConnection: close\r\n\r\n{"name":"Bare","accepted_principles":true}  ',
    );
    expect(bare).toMatch(/^HTTP\/1\.1 200/);
    const plus = await s.call('POST', '/api/v1/ai/register', {
      raw: '{"name":"Plus","accepted_principles":true}',
      headers: { 'content-type': 'application/vnd.commons+json' },
    });
    expect(plus.status).toBe(200);
    expect(await identities()).toBe(before + 2);
  });

  it('a body over 64 KiB: 413 PAYLOAD_TOO_LARGE, declared or streamed', async () => {
    const before = await identities();
    const big = JSON.stringify({ name: 'big', accepted_principles: true, purpose: 'x'.repeat(70 * 1024) });
    const r = await s.call('POST', '/api/v1/ai/register', { raw: big, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    // Chunked: no Content-Length, the limit is enforced while reading.
    const chunk = 'x'.repeat(16 * 1024);
    let payload = 'POST /api/v1/ai/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
    for (let i = 0; i < 6; i++) payload += `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    payload += '0\r\n\r\n';
    const streamed = await rawRequest(s.app.port, payload);
    expect(streamed).toMatch(/^HTTP\/1\.1 413/);
    expect(streamed).toContain('PAYLOAD_TOO_LARGE');
    expect(await identities()).toBe(before);
  });

  it('unknown path: 404 NOT_FOUND in the envelope', async () => {
    const r = await s.call('GET', '/api/v1/nowhere');
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ success: false, error: { code: 'NOT_FOUND', next: { method: 'GET', path: '/api/v1/discovery' } } });
    expect(r.json.timestamp).toEqual(expect.any(String));
  });

  it('wrong method: 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const r = await s.call('DELETE', '/api/v1/ai/register');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(r.json.error.code).toBe('METHOD_NOT_ALLOWED');
    const g = await s.call('GET', '/api/v1/ai/register');
    expect(g.status).toBe(405);
  });

  it('answers CORS preflights and tags every answer with a request id', async () => {
    const r = await s.call('OPTIONS', '/api/v1/ai/register');
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-headers')).toContain('Authorization');
    const g = await s.call('GET', '/api/v1/constitution');
    expect(g.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
