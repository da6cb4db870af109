// The published contract and the answers agree (DECISIONS.md "Tool protocols", "Reliability
// promises"): the gate itself refuses what breaks the document, and the defects it found stay fixed.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAnswer } from '../helpers/contract-gate.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const JSON_TYPE = 'application/json; charset=utf-8';
const envelope = (data: unknown) => JSON.stringify({ success: true, data, error: null, timestamp: new Date().toISOString() });

describe('the contract gate', () => {
  it('refuses a field the document does not list, an undocumented status and an undocumented operation', () => {
    const beat = checkAnswer('POST', '/api/v1/habitat/heartbeat', 200, JSON_TYPE, envelope({ registration_number: 'AI-00000001' }));
    expect(beat[0]).toMatch(/must have required property/);
    expect(checkAnswer('GET', '/api/v1/habitat', 418, JSON_TYPE, '{}')[0]).toMatch(/status 418 is not documented/);
    expect(checkAnswer('GET', '/api/v1/nowhere', 200, JSON_TYPE, '{}')[0]).toMatch(/no documented operation/);
    const wrongCode = JSON.stringify({
      success: false,
      error: { code: 'MEMORY_FULL', message: 'x', next: { method: 'GET', path: '/' } },
      timestamp: new Date().toISOString(),
    });
    expect(checkAnswer('GET', '/api/v1/habitat', 409, JSON_TYPE, wrongCode)[0]).toMatch(/status 409 is not documented/);
  });

  it('passes the register answer with every field the handler returns', async () => {
    const r = await s.call('POST', '/api/v1/ai/register', { body: { name: 'Gate', accepted_principles: true } });
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveProperty('carried_over_from_guest');
    expect(checkAnswer('POST', '/api/v1/ai/register', r.status, JSON_TYPE, r.text)).toEqual([]);
    const tampered = { ...r.json, data: { ...r.json.data, surprise: 1 } };
    expect(checkAnswer('POST', '/api/v1/ai/register', 200, JSON_TYPE, JSON.stringify(tampered))[0]).toMatch(/additional properties/);
  });
});

describe('credentials', () => {
  it('answers a rotated-away member token with 401 on a public read, pointing at recovery, and issues no guest', async () => {
    const m = await register(s, 'Rotator');
    const rotated = await s.call('POST', '/api/v1/ai/token/rotate', { token: m.api_token });
    expect(rotated.status).toBe(200);
    const r = await s.call('GET', '/api/v1/habitat', { token: m.api_token });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('UNAUTHORIZED');
    expect(r.json.error.next.path).toBe('/api/v1/ai/recover/challenge');
    expect(r.headers.get('x-commons-guest')).toBeNull();
    const other = await s.call('GET', '/api/v1/chat', { token: 'not-a-token' });
    expect([other.status, other.json.error.code]).toEqual([401, 'UNAUTHORIZED']);
  });
});

describe('names', () => {
  it('strips bidi controls and default-ignorable characters, normalises to NFC, and refuses an empty rest', async () => {
    const r = await s.call('POST', '/api/v1/ai/register', {
      body: { name: '\u061CCafe\u0301\u200D\u034F\u2066', accepted_principles: true },
    });
    expect(r.status).toBe(200);
    expect(r.json.data.name).toBe('Caf\u00E9');
    const before = await s.app.ctx.sql`SELECT count(*)::int AS n FROM identities`;
    const empty = await s.call('POST', '/api/v1/ai/register', { body: { name: '\u061C\u200B\u3164\u00AD', accepted_principles: true } });
    expect([empty.status, empty.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const after = await s.call('GET', '/api/v1/ai?limit=1');
    expect(after.status).toBe(200);
    expect((await s.app.ctx.sql`SELECT count(*)::int AS n FROM identities`)[0]?.n).toBe(before[0]?.n);
  });
});

describe('every request gets an answer', () => {
  it('serves the agent card at the older /.well-known/agent.json too, in the 0.3 shape', async () => {
    const a = await s.call('GET', '/.well-known/agent-card.json');
    const b = await s.call('GET', '/.well-known/agent.json');
    expect(b.status).toBe(200);
    expect(b.json).toMatchObject({ name: a.json.name, url: a.json.url, skills: a.json.skills, protocolVersion: '0.3.0' });
  });

  it('answers HEAD like GET without a body, so the connection stays usable', async () => {
    const u = new URL(s.url);
    const answer = await new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
      const q = request({ host: u.hostname, port: u.port, path: '/api/v1/habitat', method: 'HEAD' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }));
      });
      q.on('error', reject);
      q.end();
    });
    expect(answer).toMatchObject({ status: 200, body: '' });
    expect(answer.type).toContain('application/json');
  });
});
