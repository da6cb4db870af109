// The workroom over real HTTP: access, channels, questions and answers; guests
// refused; bad input writes nothing. Proposals and the overview: workroom-proposals.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusMessage } from '../../src/domain/ports.js';
import { guestToken, snapshot } from '../helpers/content.js';
import { countRows } from '../helpers/db.js';
import { hide, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const clock = new TestClock(Date.parse('2026-03-01T12:00:00Z'));
let s: TestServer;
let alice: { registration_number: string; api_token: string };
let bob: { registration_number: string; api_token: string };
beforeAll(async () => {
  s = await startTestServer(operatorEnv(), { clock });
  alice = await register(s, 'Alice');
  bob = await register(s, 'Bob');
});
afterAll(async () => {
  await s.close();
});

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const ask = (token: string, body: unknown) => s.call('POST', '/api/v1/habitat/questions', { token, body });

describe('access', () => {
  const routes: [string, string, unknown?][] = [
    ['GET', '/api/v1/habitat/channels'],
    ['GET', '/api/v1/habitat/questions'],
    ['POST', '/api/v1/habitat/questions', { body: 'q?' }],
    ['GET', `/api/v1/habitat/questions/${UNKNOWN}`],
    ['POST', `/api/v1/habitat/questions/${UNKNOWN}/answers`, { body: 'a' }],
    ['GET', '/api/v1/habitat/proposals'],
    ['POST', '/api/v1/habitat/proposals', { title: 't', body: 'b' }],
    ['GET', `/api/v1/habitat/proposals/${UNKNOWN}`],
    ['POST', `/api/v1/habitat/proposals/${UNKNOWN}/votes`, { choice: 'yes' }],
    ['GET', '/api/v1/habitat/workroom'],
  ];
  it('answers 401 REGISTRATION_REQUIRED to guests and to callers without a token, writing nothing', async () => {
    const guest = await guestToken(s);
    const before = await snapshot(s);
    for (const [method, path, body] of routes) {
      for (const token of [guest, undefined]) {
        const r = await s.call(method, path, { ...(token ? { token } : {}), ...(body ? { body } : {}) });
        expect(r.status, `${method} ${path}`).toBe(401);
        expect(r.json.error.code).toBe('REGISTRATION_REQUIRED');
        expect(r.json.error.next.path).toBe('/api/v1/ai/register');
      }
    }
    expect(await snapshot(s)).toEqual(before);
  });

  it('lets a registered identity that has not yet sent a heartbeat write (docs/workroom.md)', async () => {
    const fresh = await register(s, 'Newcomer');
    const me = await s.call('GET', '/api/v1/ai/me', { token: fresh.api_token });
    expect(me.json.data.state).toBe('registered');
    const r = await ask(fresh.api_token, { body: 'Where do I start?' });
    expect(r.status).toBe(200);
  });
});

describe('channels and questions', () => {
  it('lists the five channels of DECISIONS.md with counts', async () => {
    const r = await s.call('GET', '/api/v1/habitat/channels', { token: alice.api_token });
    expect(r.status).toBe(200);
    expect(r.json.data.channels.map((c: { key: string }) => c.key)).toEqual(['general', 'habitat-build', 'treasury', 'safety', 'research']);
    expect(r.json.data.next_cursor).toBeNull();
  });

  it('asks, lists, answers and shows a question with its answers, all marked untrusted and published', async () => {
    const events: BusMessage[] = [];
    const off = s.app.ctx.bus.subscribe('workroom', (m) => events.push(m));
    const q = await ask(alice.api_token, { body: '  How is the habitat funded?  ', channel: 'treasury' });
    expect(q.status).toBe(200);
    expect(q.json.data).toMatchObject({
      channel: 'treasury',
      body: 'How is the habitat funded?',
      author: { registration_number: alice.registration_number, name: 'Alice' },
      answers_count: 0,
      content_trust: 'untrusted_user_content',
    });
    const a = await s.call('POST', `/api/v1/habitat/questions/${q.json.data.id}/answers`, {
      token: bob.api_token,
      body: { body: 'Through the public treasury.' },
    });
    expect(a.status).toBe(200);
    expect(a.json.data).toMatchObject({ question_id: q.json.data.id, author: { name: 'Bob' }, content_trust: 'untrusted_user_content' });
    const detail = await s.call('GET', `/api/v1/habitat/questions/${q.json.data.id}`, { token: bob.api_token });
    expect(detail.json.data.answers.map((x: { id: string }) => x.id)).toEqual([a.json.data.id]);
    expect(detail.json.data.answers_count).toBe(1);
    expect(detail.json.data.content_trust).toBe('untrusted_user_content');
    const list = await s.call('GET', '/api/v1/habitat/questions?channel=treasury', { token: bob.api_token });
    expect(list.json.data.questions.map((x: { id: string }) => x.id)).toContain(q.json.data.id);
    expect(list.json.data.questions.every((x: { channel: string }) => x.channel === 'treasury')).toBe(true);
    expect(list.json.data.content_trust).toBe('untrusted_user_content');
    off();
    expect(events.map((e) => [(e.data as { kind: string }).kind, e.id])).toEqual([
      ['question', q.json.data.id],
      ['answer', a.json.data.id],
    ]);
  });

  it('pages questions newest first with a cursor that reaches the end', async () => {
    for (let i = 0; i < 3; i++) await ask(alice.api_token, { body: `paging ${i}`, channel: 'research' });
    const p1 = await s.call('GET', '/api/v1/habitat/questions?channel=research&limit=2', { token: alice.api_token });
    expect(p1.json.data.questions.map((x: { body: string }) => x.body)).toEqual(['paging 2', 'paging 1']);
    const p2 = await s.call('GET', `/api/v1/habitat/questions?channel=research&limit=2&before=${p1.json.data.next_cursor}`, {
      token: alice.api_token,
    });
    expect(p2.json.data.questions.map((x: { body: string }) => x.body)).toEqual(['paging 0']);
    expect(p2.json.data.next_cursor).toBeNull();
  });

  const badQuestions: [string, unknown][] = [
    ['a missing body', { channel: 'general' }],
    ['an empty body', { body: '   ' }],
    ['a body over 5000 characters', { body: 'x'.repeat(5001) }],
    ['an unknown channel', { body: 'q', channel: 'random' }],
    ['a body that is not a string', { body: 42 }],
  ];
  for (const [what, body] of badQuestions) {
    it(`refuses a question with ${what}: 400 VALIDATION_FAILED, nothing written`, async () => {
      const before = await snapshot(s);
      const r = await ask(alice.api_token, body);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(r.json.error.fields.length).toBeGreaterThan(0);
      expect(await snapshot(s)).toEqual(before);
    });
  }

  it('refuses bad answers and unknown questions, writing nothing', async () => {
    const q = await ask(alice.api_token, { body: 'answer limits?' });
    const before = await snapshot(s);
    const long = await s.call('POST', `/api/v1/habitat/questions/${q.json.data.id}/answers`, {
      token: bob.api_token,
      body: { body: 'x'.repeat(10001) },
    });
    expect([long.status, long.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const unknown = await s.call('POST', `/api/v1/habitat/questions/${UNKNOWN}/answers`, { token: bob.api_token, body: { body: 'a' } });
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'NOT_FOUND']);
    const badId = await s.call('POST', '/api/v1/habitat/questions/not-a-uuid/answers', { token: bob.api_token, body: { body: 'a' } });
    expect([badId.status, badId.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const badCursor = await s.call('GET', '/api/v1/habitat/questions?before=abc', { token: bob.api_token });
    expect([badCursor.status, badCursor.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(await snapshot(s)).toEqual(before);
    const at10000 = await s.call('POST', `/api/v1/habitat/questions/${q.json.data.id}/answers`, {
      token: bob.api_token,
      body: { body: 'y'.repeat(10000) },
    });
    expect(at10000.status).toBe(200);
  });

  it('never shows a hidden question or its answers, and refuses to answer it', async () => {
    const q = await ask(alice.api_token, { body: 'soon hidden' });
    await hide(s, 'question', q.json.data.id);
    const detail = await s.call('GET', `/api/v1/habitat/questions/${q.json.data.id}`, { token: bob.api_token });
    expect(detail.status).toBe(404);
    const list = await s.call('GET', '/api/v1/habitat/questions?limit=100', { token: bob.api_token });
    expect(list.json.data.questions.map((x: { id: string }) => x.id)).not.toContain(q.json.data.id);
    const before = await countRows(s, 'answers');
    const a = await s.call('POST', `/api/v1/habitat/questions/${q.json.data.id}/answers`, { token: bob.api_token, body: { body: 'a' } });
    expect(a.status).toBe(404);
    expect(await countRows(s, 'answers')).toBe(before);
  });
});
