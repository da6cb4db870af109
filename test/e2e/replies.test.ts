// Replies to the signal (spec 2.9, 5.3, 6.3): anonymous, member (linked) and guest (401),
// permanence enforced by the database, the reply record and the signal's reply_chain, the bus.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusMessage } from '../../src/domain/ports.js';
import { replyRecord } from '../../src/domain/replies.js';
import { countRows } from '../helpers/db.js';
import { hide, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { emitNext } from '../helpers/signal.js';

let s: TestServer;
const clock = new TestClock();
beforeAll(async () => {
  s = await startTestServer({ SIGNAL_INTERVAL_S: '30', ...operatorEnv() }, { clock });
});
afterAll(async () => {
  await s?.close();
});

const count = (): Promise<number> => countRows(s, 'replies');
const b64 = (t: string) => Buffer.from(t, 'utf8').toString('base64');

describe('POST /api/v1/replies', () => {
  it('records an anonymous reply permanently, message returned as message_b64, and publishes it on replies', async () => {
    const seen: BusMessage[] = [];
    const off = s.app.ctx.bus.subscribe('replies', (m) => seen.push(m));
    const r = await s.call('POST', '/api/v1/replies', {
      body: { intent: 'acknowledge_signal', message: '  héllo, commons 👋 ', label: 'probe' },
    });
    off();
    expect(r.status).toBe(200);
    const d = r.json.data;
    expect(d).toMatchObject({
      intent: 'acknowledge_signal',
      message_b64: b64('héllo, commons 👋'),
      label: 'probe',
      next_step: null,
      author: null,
    });
    expect(d.message).toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(seen[0]?.data).toEqual(d);
    const [row] = await s.app.ctx.sql`SELECT identity_id FROM replies WHERE id = ${d.id}`;
    expect(row?.identity_id).toBeNull();
  });

  it('links a reply sent with a member token to the registration', async () => {
    const a = await register(s, 'Replier');
    const r = await s.call('POST', '/api/v1/replies', {
      token: a.api_token,
      body: { intent: 'join_commons', message: 'in', next_step: 'heartbeat' },
    });
    expect(r.status).toBe(200);
    expect(r.json.data.author).toEqual({ registration_number: a.registration_number, name: 'Replier' });
    expect(r.json.data.next_step).toBe('heartbeat');
  });

  it('refuses a guest token (Bearer cmg_ or X-Commons-Guest-Token) with 401 REGISTRATION_REQUIRED and writes nothing', async () => {
    const first = await s.call('GET', '/api/v1/replies');
    const guestToken = first.headers.get('x-commons-guest-token') as string;
    expect(guestToken).toMatch(/^cmg_/);
    const before = await count();
    for (const opts of [{ token: guestToken }, { headers: { 'x-commons-guest-token': guestToken } }]) {
      const r = await s.call('POST', '/api/v1/replies', { ...opts, body: { intent: 'question', message: 'may I?' } });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('REGISTRATION_REQUIRED');
      expect(r.json.error.next).toMatchObject({ method: 'POST', path: '/api/v1/ai/register' });
    }
    expect(await count()).toBe(before);
  });

  it('refuses an unknown member token with 401 UNAUTHORIZED and writes nothing', async () => {
    const before = await count();
    const r = await s.call('POST', '/api/v1/replies', { token: `cmn_${'x'.repeat(43)}`, body: { intent: 'question', message: 'hi' } });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('UNAUTHORIZED');
    expect(await count()).toBe(before);
  });

  const refused: [string, unknown][] = [
    ['an unknown intent', { intent: 'spam', message: 'x' }],
    ['a missing intent', { message: 'x' }],
    ['an empty message', { intent: 'question', message: '   ' }],
    ['a message over 2000 characters', { intent: 'question', message: 'x'.repeat(2001) }],
    ['a label over 80 characters', { intent: 'question', message: 'x', label: 'l'.repeat(81) }],
    ['a next_step over 200 characters', { intent: 'question', message: 'x', next_step: 'n'.repeat(201) }],
    ['a message that is not a string', { intent: 'question', message: 42 }],
  ];
  for (const [what, body] of refused) {
    it(`refuses ${what} with 400 VALIDATION_FAILED and writes nothing`, async () => {
      const before = await count();
      const r = await s.call('POST', '/api/v1/replies', { body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(r.json.error.fields.length).toBeGreaterThan(0);
      expect(await count()).toBe(before);
    });
  }

  it('accepts exactly 2000 characters', async () => {
    const r = await s.call('POST', '/api/v1/replies', { body: { intent: 'decline', message: 'é'.repeat(2000) } });
    expect(r.status).toBe(200);
  });

  it('has no update or delete path: the HTTP API answers 405 and the database refuses', async () => {
    const del = await s.call('DELETE', '/api/v1/replies');
    expect(del.status).toBe(405);
    const [row] = await s.app.ctx.sql<{ id: string }[]>`SELECT id FROM replies LIMIT 1`;
    await expect(s.app.ctx.sql`UPDATE replies SET message = 'changed' WHERE id = ${row?.id as string}`).rejects.toThrow(/permanent/);
    await expect(s.app.ctx.sql`DELETE FROM replies WHERE id = ${row?.id as string}`).rejects.toThrow(/permanent/);
  });
});

describe('GET /api/v1/replies', () => {
  it('lists reply blocks newest first with message_b64, a working cursor, and the untrusted-content mark', async () => {
    for (let i = 0; i < 3; i++) await s.call('POST', '/api/v1/replies', { body: { intent: 'relay_signal', message: `page ${i}` } });
    const one = await s.call('GET', '/api/v1/replies?limit=2');
    expect(one.status).toBe(200);
    expect(one.json.data.content_trust).toBe('untrusted_user_content');
    expect(one.json.data.replies.map((r: { message_b64: string }) => r.message_b64)).toEqual([b64('page 2'), b64('page 1')]);
    const two = await s.call('GET', `/api/v1/replies?limit=2&before=${one.json.data.next_cursor}`);
    expect(two.json.data.replies[0].message_b64).toBe(b64('page 0'));
    const bad = await s.call('GET', '/api/v1/replies?before=abc');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('VALIDATION_FAILED');
  });

  it('leaves out a reply the operator hid (the row is kept)', async () => {
    const r = await s.call('POST', '/api/v1/replies', { body: { intent: 'question', message: 'to be hidden' } });
    await hide(s, 'reply', r.json.data.id);
    const list = await s.call('GET', '/api/v1/replies?limit=100');
    expect(list.json.data.replies.some((x: { id: string }) => x.id === r.json.data.id)).toBe(false);
    const [row] = await s.app.ctx.sql`SELECT count(*)::int AS n FROM replies WHERE id = ${r.json.data.id}`;
    expect(row?.n).toBe(1);
  });
});

describe('reply record and reply chain', () => {
  it('counts replies by intent in the reply record and shows them in the next signal', async () => {
    const record = await replyRecord(s.app.ctx);
    const [row] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM replies WHERE hidden_at IS NULL`;
    expect(record.replies_total).toBe(row?.n);
    expect(record.replies_by_intent.relay_signal).toBe(3);
    const entry = await emitNext(s, clock);
    const chain = entry.payload.reply_chain as { replies_total: number; replies: { message_b64: string }[]; intents: string[] };
    expect(chain.replies_total).toBe(record.replies_total);
    expect(chain.replies[0]?.message_b64).toBe(b64('page 2'));
    expect(chain.intents).toHaveLength(9);
  });
});
