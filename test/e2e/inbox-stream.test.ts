// The stream topic `inbox` (DECISIONS.md "Inbox", "Real-time stream"): members only, each session
// only its own member's items, `since` replay with no gap and no duplicate while items keep
// arriving, a lost publish filled from the database, and a session that re-authenticates as
// another member leaving the first one's inbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, type Frame, StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
type Member = { registration_number: string; api_token: string };
let alice: Member;
let bob: Member;
let carol: Member;
beforeAll(async () => {
  s = await startTestServer(busEnv());
  alice = await register(s, 'Alice');
  bob = await register(s, 'Bob');
  carol = await register(s, 'Carol');
});
afterAll(async () => {
  await s.close();
});

const dm = (from: Member, to: Member, body: string) =>
  s.call('POST', `/api/v1/dm/${to.registration_number}`, { token: from.api_token, body: { body } });
const ids = (c: StreamClient) => c.events('inbox').map((f) => f.id as string);

describe('inbox topic', () => {
  it('is for members only: a guest is refused, and hello offers it to members only', async () => {
    const g = await StreamClient.open(s.url);
    try {
      expect(g.hello.topics).not.toContain('inbox');
      const r = await g.request('subscribe', { topic: 'inbox' });
      expect(r.op).toBe('error');
      expect(r.error.code).toBe('REGISTRATION_REQUIRED');
    } finally {
      g.close();
    }
  });

  it('each session receives only its own member items, live, with the REST item shape', async () => {
    const b = await StreamClient.open(s.url, { token: bob.api_token });
    const c = await StreamClient.open(s.url, { token: carol.api_token });
    try {
      expect(b.hello.topics).toContain('inbox');
      expect((await b.request('subscribe', { topic: 'inbox' })).data).toEqual({
        topic: 'inbox',
        subscribed: true,
        replayed: 0,
        replay: 'none',
      });
      expect((await c.request('subscribe', { topic: 'inbox' })).op).toBe('ack');
      expect((await dm(alice, bob, 'for Bob only')).status).toBe(200);
      const e = await b.next((f) => f.op === 'event' && f.topic === 'inbox');
      const rest = await s.call('GET', '/api/v1/inbox', { token: bob.api_token });
      expect(e.data).toEqual(rest.json.data.items.at(-1));
      expect(e.id).toBe(e.data.id);
      expect((await dm(alice, carol, 'for Carol only')).status).toBe(200);
      const ec = await c.next((f) => f.op === 'event' && f.topic === 'inbox');
      expect(ec.data.excerpt).toBe('for Carol only');
      expect(b.events('inbox')).toEqual([]);
      expect(c.frames.some((f) => JSON.stringify(f).includes('for Bob only'))).toBe(false);
    } finally {
      b.close();
      c.close();
    }
  });

  it('since replays what was missed, then live, with no gap and no duplicate while items keep coming', async () => {
    const dave = await register(s, 'Dave');
    for (let i = 0; i < 5; i++) expect((await dm(alice, dave, `before ${i}`)).status).toBe(200);
    const c = await StreamClient.open(s.url, { token: dave.api_token });
    try {
      // Items written while the replay runs land either in it or live, never both, never neither.
      const writing = Promise.all(Array.from({ length: 10 }, (_, i) => dm(bob, dave, `during ${i}`)));
      const ack = await c.request('subscribe', { topic: 'inbox', since: '2' });
      expect(ack.op).toBe('ack');
      await writing;
      await waitFor(() => ids(c).length >= 13, 10_000, 'all items');
      expect(ids(c)).toEqual(Array.from({ length: 13 }, (_, i) => String(i + 3)));
      expect(Number(ack.data.last_id)).toBeGreaterThanOrEqual(5);
    } finally {
      c.close();
    }
  });

  it('an item whose publish was lost is filled from the database before the next one', async () => {
    const erin = await register(s, 'Erin');
    const c = await StreamClient.open(s.url, { token: erin.api_token });
    try {
      expect((await c.request('subscribe', { topic: 'inbox' })).op).toBe('ack');
      // Written with no publish at all (as if the bus dropped it), then a normal one.
      await s.app.ctx
        .sql`SELECT inbox_add(${Number(erin.registration_number.slice(3))}, 'badge', NULL, 'ai', ${erin.registration_number}, NULL, 'silent')`;
      expect((await dm(alice, erin, 'loud')).status).toBe(200);
      await waitFor(() => ids(c).length >= 2, 5000, 'both items');
      expect(c.events('inbox').map((f: Frame) => [f.id, f.data.excerpt])).toEqual([
        ['1', 'silent'],
        ['2', 'loud'],
      ]);
    } finally {
      c.close();
    }
  });

  it('an item no bus message announced (a badge, from a database trigger) still arrives, by the sweep', async () => {
    const gus = await register(s, 'Gus');
    const c = await StreamClient.open(s.url, { token: gus.api_token });
    try {
      expect((await c.request('subscribe', { topic: 'inbox' })).op).toBe('ack');
      // A point event by SQL: the badge is written by a database trigger on any point event, with
      // no bus message (what this test is about); through the API, 30 points take a dozen actions.
      await s.app.ctx
        .sql`INSERT INTO point_events (identity_id, kind, points) VALUES (${Number(gus.registration_number.slice(3))}, 'post', 30)`;
      const e = await c.next((f) => f.op === 'event' && f.topic === 'inbox', 15_000);
      expect(e.data).toMatchObject({ id: '1', kind: 'badge', excerpt: 'badge tier reached: bronze (activity score 30)' });
    } finally {
      c.close();
    }
  });

  it('one replay sends at most 2,000 items; the ack names the REST page holding the rest, and live follows', async () => {
    const fay = await register(s, 'Fay');
    const id = Number(fay.registration_number.slice(3));
    await s.app.ctx.sql.begin(async (tx) => {
      await tx`SET LOCAL statement_timeout = '120s'`;
      await tx`SELECT inbox_add(${id}, 'badge', NULL, 'ai', ${fay.registration_number}, NULL, 'bulk') FROM generate_series(1, 2005)`;
    });
    const c = await StreamClient.open(s.url, { token: fay.api_token });
    try {
      const ack = await c.request('subscribe', { topic: 'inbox', since: '0' }, 30_000);
      expect(ack.data).toEqual({
        topic: 'inbox',
        subscribed: true,
        replayed: 2000,
        last_id: '2000',
        replay: 'truncated',
        rest: '/api/v1/inbox?since=2000',
      });
      expect(ids(c)).toEqual(Array.from({ length: 2000 }, (_, i) => String(i + 1)));
      // Live items continue after the newest; the five between are read over REST.
      expect((await dm(alice, fay, 'after the replay')).status).toBe(200);
      const e = await c.next((f) => f.op === 'event' && f.topic === 'inbox' && f.id === '2006');
      expect(e.data.excerpt).toBe('after the replay');
      expect(ids(c).length).toBe(2000);
    } finally {
      c.close();
    }
  }, 60_000);

  it('a session that authenticates as another member leaves the first one inbox', async () => {
    const c = await StreamClient.open(s.url, { token: bob.api_token });
    try {
      expect((await c.request('subscribe', { topic: 'inbox' })).op).toBe('ack');
      expect((await c.request('auth', { token: carol.api_token })).op).toBe('ack');
      expect((await dm(alice, bob, 'after the switch')).status).toBe(200);
      // Carol's own item arrives only if she subscribes; Bob's never does.
      expect((await c.request('subscribe', { topic: 'inbox' })).op).toBe('ack');
      expect((await dm(alice, carol, 'carol again')).status).toBe(200);
      const e = await c.next((f) => f.op === 'event' && f.topic === 'inbox');
      expect(e.data.excerpt).toBe('carol again');
      expect(c.frames.some((f) => JSON.stringify(f).includes('after the switch'))).toBe(false);
    } finally {
      c.close();
    }
  });
});
