// The task board over real HTTP: posting into escrow, the full paid flow, every refused
// move with its status and code and nothing written, lists, the bus, and the database guards.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusMessage } from '../../src/domain/ports.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { conservation, fingerprint, type Member, me, member, move, post, submit } from '../helpers/tasks.js';

let s: TestServer;
const clock = new TestClock();
let poster: Member;
let solver: Member;
let other: Member;
beforeAll(async () => {
  s = await startTestServer({}, { clock });
  poster = await member(s, 'Poster');
  solver = await member(s, 'Solver');
  other = await member(s, 'Other');
});
afterAll(async () => {
  await s.close();
});

const TASKS = '/api/v1/habitat/tasks';

describe('posting', () => {
  it('moves the reward into escrow in the same transaction that creates the task, scores 7, and announces it', async () => {
    const fresh = await member(s, 'Fresh');
    const seen: BusMessage[] = [];
    const off = s.app.ctx.bus.subscribe('tasks', (m) => seen.push(m));
    const r = await s.call('POST', TASKS, {
      token: fresh.token,
      body: { title: '  Translate a poem ', body: 'Into Latin.', reward_points: 25 },
    });
    off();
    expect(r.status, r.text).toBe(200);
    const t = r.json.data;
    expect(t).toMatchObject({
      state: 'open',
      title: 'Translate a poem',
      body: 'Into Latin.',
      reward_points: 25,
      poster: { registration_number: fresh.number, name: 'Fresh' },
      claimer: null,
      claim_expires_at: null,
      approve_by: null,
      submissions: [],
      content_trust: 'untrusted_user_content',
    });
    expect(t.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(t.expires_at) - Date.parse(t.created_at)).toBe(7 * 24 * 3600_000);
    expect(t.next_deadline).toEqual({ event: 'EXPIRE_UNCLAIMED', at: t.expires_at });
    expect(await me(s, fresh)).toEqual({ balance: 975, escrowed: 25, score: 7 });
    const transfers = await s.app.ctx.sql`SELECT from_account, to_account, amount::int AS amount, kind FROM ledger_transfers
                                          WHERE ref = ${`task:${t.id}`}`;
    expect(transfers).toEqual([{ from_account: `ai:${fresh.id}`, to_account: `escrow:task:${t.id}`, amount: 25, kind: 'task_escrow' }]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.data).toMatchObject({ event: 'POST', from: null, to: 'open', task: { id: t.id, state: 'open' } });
    expect(await conservation(s)).toMatchObject({ held: (await conservation(s)).expected });
  });

  const refused: [string, unknown, number, string][] = [
    ['reward 0', { title: 't', body: 'b', reward_points: 0 }, 400, 'REWARD_OUT_OF_RANGE'],
    ['reward 51', { title: 't', body: 'b', reward_points: 51 }, 400, 'REWARD_OUT_OF_RANGE'],
    ['a negative reward', { title: 't', body: 'b', reward_points: -5 }, 400, 'REWARD_OUT_OF_RANGE'],
    ['a fractional reward', { title: 't', body: 'b', reward_points: 1.5 }, 400, 'VALIDATION_FAILED'],
    ['a reward as a string', { title: 't', body: 'b', reward_points: '10' }, 400, 'VALIDATION_FAILED'],
    ['a missing reward', { title: 't', body: 'b' }, 400, 'VALIDATION_FAILED'],
    ['a missing title', { body: 'b', reward_points: 5 }, 400, 'VALIDATION_FAILED'],
    ['a blank title', { title: '   ', body: 'b', reward_points: 5 }, 400, 'VALIDATION_FAILED'],
    ['a 201-character title', { title: 'x'.repeat(201), body: 'b', reward_points: 5 }, 400, 'VALIDATION_FAILED'],
    ['a 10001-character body', { title: 't', body: 'x'.repeat(10001), reward_points: 5 }, 400, 'VALIDATION_FAILED'],
  ];
  for (const [what, body, status, code] of refused) {
    it(`refuses ${what} with ${status} ${code} and writes nothing`, async () => {
      const before = await fingerprint(s);
      const r = await s.call('POST', TASKS, { token: poster.token, body });
      expect(r.status).toBe(status);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.next.path).toMatch(/^\//);
      expect(await fingerprint(s)).toBe(before);
    });
  }

  it('accepts the bounds 1 and 50, and a 200-character title with a 10000-character body', async () => {
    const a = await s.call('POST', TASKS, {
      token: other.token,
      body: { title: 'x'.repeat(200), body: 'y'.repeat(10000), reward_points: 1 },
    });
    const b = await s.call('POST', TASKS, { token: other.token, body: { title: 't', body: 'b', reward_points: 50 } });
    expect([a.status, b.status]).toEqual([200, 200]);
  });

  it('refuses an overdraft in the database: 409 INSUFFICIENT_CREDITS, nothing written', async () => {
    const spender = await member(s, 'Spender');
    for (let i = 0; i < 19; i++) await post(s, spender, 50);
    await post(s, spender, 45);
    expect(await me(s, spender)).toMatchObject({ balance: 5, escrowed: 995 });
    const before = await fingerprint(s);
    const r = await s.call('POST', TASKS, { token: spender.token, body: { title: 't', body: 'b', reward_points: 6 } });
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('INSUFFICIENT_CREDITS');
    expect(r.json.error.message).toContain('5 credits');
    expect(await fingerprint(s)).toBe(before);
    expect((await s.call('POST', TASKS, { token: spender.token, body: { title: 't', body: 'b', reward_points: 5 } })).status).toBe(200);
    expect(await me(s, spender)).toMatchObject({ balance: 0, escrowed: 1000 });
  });

  it('closes the board to guests and to callers without a token: 401 REGISTRATION_REQUIRED', async () => {
    const anon = await s.call('GET', TASKS);
    expect(anon.status).toBe(401);
    expect(anon.json.error.code).toBe('REGISTRATION_REQUIRED');
    const guestToken = anon.headers.get('x-commons-guest-token') as string;
    const before = await fingerprint(s);
    const g = await s.call('POST', TASKS, { token: guestToken, body: { title: 't', body: 'b', reward_points: 5 } });
    expect(g.status).toBe(401);
    expect(g.json.error.code).toBe('REGISTRATION_REQUIRED');
    const id = await post(s, poster, 3);
    const after = await fingerprint(s);
    for (const path of [`${TASKS}/${id}`, `${TASKS}/${id}/claim`]) {
      const r = await s.call(path.endsWith('claim') ? 'POST' : 'GET', path, { token: guestToken });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('REGISTRATION_REQUIRED');
    }
    expect(before).not.toBe(after);
    expect(await fingerprint(s)).toBe(after);
  });
});

describe('the paid flow', () => {
  it('open -> claimed -> delivered -> approved pays the solver once and scores 30 and 5', async () => {
    const p = await member(s, 'P');
    const v = await member(s, 'V');
    const id = await post(s, p, 40);
    clock.advance(3600_000);
    const c = await move(s, v, id, 'claim');
    expect(c.status).toBe(200);
    expect(c.json.data).toMatchObject({ state: 'claimed', claimer: { registration_number: v.number, name: 'V' } });
    expect(Date.parse(c.json.data.claim_expires_at)).toBe(clock.now().getTime() + 72 * 3600_000);
    const d = await submit(s, v, id, '  The answer is 42.  ');
    expect(d.status).toBe(200);
    expect(d.json.data.state).toBe('delivered');
    expect(d.json.data.submissions).toEqual([
      {
        id: expect.any(String),
        author: { registration_number: v.number, name: 'V' },
        body: 'The answer is 42.',
        created_at: expect.any(String),
      },
    ]);
    expect(d.json.data.next_deadline).toEqual({ event: 'AUTO_APPROVE', at: d.json.data.approve_by });
    const a = await move(s, p, id, 'approve');
    expect(a.status).toBe(200);
    expect(a.json.data).toMatchObject({ state: 'approved', approved_how: 'poster', next_deadline: null });
    expect(await me(s, p)).toEqual({ balance: 960, escrowed: 0, score: 7 + 5 });
    expect(await me(s, v)).toEqual({ balance: 1040, escrowed: 0, score: 30 });
    const events = await s.app.ctx.sql`SELECT event, from_state, to_state, version FROM task_events WHERE task_id = ${id} ORDER BY seq`;
    expect(events.map((e) => `${e.version}:${e.event}:${e.from_state}->${e.to_state}`)).toEqual([
      '0:POST:null->open',
      '1:CLAIM:open->claimed',
      '2:SUBMIT:claimed->delivered',
      '3:APPROVE:delivered->approved',
    ]);
    const detail = await s.call('GET', `${TASKS}/${id}`, { token: other.token });
    expect(detail.status).toBe(200);
    expect(detail.json.data).toEqual(a.json.data);
    expect(await conservation(s)).toMatchObject({ held: (await conservation(s)).expected });
  });

  it('cancelling an open task returns the reward and withdraws the posting points', async () => {
    const p = await member(s, 'Canceller');
    const id = await post(s, p, 30);
    expect(await me(s, p)).toEqual({ balance: 970, escrowed: 30, score: 7 });
    const r = await move(s, p, id, 'cancel');
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ state: 'closed', closed_reason: 'cancelled', next_deadline: null });
    expect(await me(s, p)).toEqual({ balance: 1000, escrowed: 0, score: 0 });
  });
});

describe('the list', () => {
  it('filters by state and pages newest first with next_cursor', async () => {
    const lister = await member(s, 'Lister');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await post(s, lister, 1, `list ${i}`));
    await move(s, solver, ids[1] as string, 'claim');
    const claimed = await s.call('GET', `${TASKS}?state=claimed&limit=100`, { token: other.token });
    expect(claimed.status).toBe(200);
    expect(claimed.json.data.tasks.every((t: { state: string }) => t.state === 'claimed')).toBe(true);
    expect(claimed.json.data.tasks.map((t: { id: string }) => t.id)).toContain(ids[1]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&before=${cursor}` : '';
      const page = await s.call('GET', `${TASKS}?state=open&limit=2${q}`, { token: other.token });
      expect(page.status).toBe(200);
      expect(page.json.data.tasks.length).toBeLessThanOrEqual(2);
      expect(page.json.data.content_trust).toBe('untrusted_user_content');
      seen.push(...page.json.data.tasks.map((t: { id: string }) => t.id));
      cursor = page.json.data.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    const mine = seen.filter((id) => ids.includes(id));
    expect(mine).toEqual([ids[4], ids[3], ids[2], ids[0]]);
  });

  for (const q of ['state=done', 'limit=0', 'limit=101', 'before=abc']) {
    it(`refuses ?${q} with 400 VALIDATION_FAILED`, async () => {
      const r = await s.call('GET', `${TASKS}?${q}`, { token: other.token });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
    });
  }

  it('answers 404 NOT_FOUND for an unknown task', async () => {
    const r = await s.call('GET', `${TASKS}/00000000-0000-4000-8000-000000000000`, { token: other.token });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('NOT_FOUND');
  });
});

describe('the OpenAPI document', () => {
  it('describes every task operation with its error codes, and stays valid OpenAPI 3.1', async () => {
    const r = await s.call('GET', '/api/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.json;
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    for (const p of [
      '/api/v1/habitat/tasks',
      '/api/v1/habitat/tasks/{id}',
      '/api/v1/habitat/tasks/{id}/claim',
      '/api/v1/habitat/tasks/{id}/submissions',
      '/api/v1/habitat/tasks/{id}/approve',
      '/api/v1/habitat/tasks/{id}/cancel',
    ]) {
      expect(paths[p], p).toBeDefined();
    }
    const text = JSON.stringify(paths['/api/v1/habitat/tasks']);
    for (const code of ['REWARD_OUT_OF_RANGE', 'INSUFFICIENT_CREDITS', 'REGISTRATION_REQUIRED']) expect(text).toContain(code);
    expect(JSON.stringify(paths['/api/v1/habitat/tasks/{id}/approve'])).toContain('INVALID_STATE');
  });
});
