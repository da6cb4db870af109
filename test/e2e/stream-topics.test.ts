// Stream topics wired across areas with real `ws` clients: `workroom` and `tasks` reach
// members only (a session that re-authenticates as a guest leaves them); `signal` replays missed
// emissions from the database with no gap and no duplicate, also while emissions are being made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { slotOf } from '../../src/domain/signal.js';
import { guestToken } from '../helpers/content.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { emitNext } from '../helpers/signal.js';
import { busEnv, type Frame, StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';

const clock = new TestClock();
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ...busEnv(), SIGNAL_INTERVAL_S: '30' }, { clock });
  // The tick the node runs at start: finished before any test, so its emission is never taken for
  // a test's own (tick() shares a tick in flight). Earlier tests used to give it that time.
  await schedulerOf(s.app).tick();
});
afterAll(async () => {
  await s.close();
});

const question = async (token: string, body: string) => {
  const r = await s.call('POST', '/api/v1/habitat/questions', { token, body: { body } });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
};
const task = async (token: string, title: string) => {
  const r = await s.call('POST', '/api/v1/habitat/tasks', { token, body: { title, body: 'b', reward_points: 3 } });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
};

describe('member-only topics', () => {
  it('guests cannot subscribe to workroom or tasks; hello does not offer them', async () => {
    const guest = await StreamClient.open(s.url);
    expect(guest.hello.topics).not.toContain('workroom');
    expect(guest.hello.topics).not.toContain('tasks');
    for (const topic of ['workroom', 'tasks']) {
      const r = await guest.request('subscribe', { topic });
      expect(r).toMatchObject({ op: 'error', error: { code: 'REGISTRATION_REQUIRED' } });
    }
    guest.close();
  });

  it('members get questions, answers and proposals on workroom, and task moves on tasks; guests never do', async () => {
    const [a, b] = [await register(s, 'Stream A'), await register(s, 'Stream B')];
    const watcher = await StreamClient.open(s.url, { token: a.api_token, msgpack: true });
    expect(watcher.hello.topics).toEqual(expect.arrayContaining(['workroom', 'tasks']));
    const guest = await StreamClient.open(s.url);
    for (const topic of ['workroom', 'tasks']) expect((await watcher.request('subscribe', { topic })).op).toBe('ack');
    for (const topic of guest.hello.topics as string[]) expect((await guest.request('subscribe', { topic })).op).toBe('ack');

    const q = await question(b.api_token, 'Who runs the relay?');
    const ev = await watcher.next((f) => f.op === 'event' && f.topic === 'workroom');
    expect(ev.id).toBe(q);
    expect(ev.data).toMatchObject({ kind: 'question', id: q, content_trust: 'untrusted_user_content' });
    const ans = await s.call('POST', `/api/v1/habitat/questions/${q}/answers`, { token: a.api_token, body: { body: 'Nobody yet.' } });
    expect((await watcher.next((f) => f.op === 'event' && f.topic === 'workroom')).data).toMatchObject({
      kind: 'answer',
      id: ans.json.data.id,
    });
    const p = await s.call('POST', '/api/v1/habitat/proposals', { token: b.api_token, body: { title: 'Run a relay', body: 'b' } });
    expect((await watcher.next((f) => f.op === 'event' && f.topic === 'workroom')).data).toMatchObject({
      kind: 'proposal',
      id: p.json.data.id,
    });
    const t = await task(b.api_token, 'Streamed task');
    expect((await watcher.next((f) => f.op === 'event' && f.topic === 'tasks')).data).toMatchObject({ event: 'POST', task: { id: t } });

    // A chat message after all of that reaches the guest, so anything before it would have too.
    const chat = await s.call('POST', '/api/v1/chat', { body: { body: 'marker for the guest' } });
    await guest.next((f) => f.op === 'event' && f.topic === 'chat' && f.data.id === chat.json.data.id);
    expect(guest.frames.filter((f) => f.topic === 'workroom' || f.topic === 'tasks')).toEqual([]);
    watcher.close();
    guest.close();
  });

  it('a member session that authenticates as a guest leaves workroom and tasks at once', async () => {
    const [a, b] = [await register(s, 'Leaver'), await register(s, 'Poster')];
    const c = await StreamClient.open(s.url, { token: a.api_token });
    const bystander = await StreamClient.open(s.url, { token: b.api_token });
    for (const topic of ['workroom', 'tasks']) {
      expect((await c.request('subscribe', { topic })).op).toBe('ack');
      expect((await bystander.request('subscribe', { topic })).op).toBe('ack');
    }
    const auth = await c.request('auth', { token: await guestToken(s) });
    expect(auth).toMatchObject({ op: 'ack', data: { guest: expect.stringMatching(/^GUEST-/) } });
    const q = await question(b.api_token, 'Still listening?');
    const t = await task(b.api_token, 'Still listening task');
    // The bystander hears both, so they went out before the leaver's frames are checked.
    await bystander.next((f) => f.op === 'event' && f.topic === 'workroom' && f.id === q);
    await bystander.next((f) => f.op === 'event' && f.topic === 'tasks' && f.data.task.id === t);
    expect(c.frames.filter((f: Frame) => f.op === 'event')).toEqual([]);
    expect(await c.request('subscribe', { topic: 'tasks' })).toMatchObject({ op: 'error', error: { code: 'REGISTRATION_REQUIRED' } });
    c.close();
    bystander.close();
  });
});

describe('signal replay', () => {
  const dbSeqs = async (after: number) =>
    (await s.app.ctx.sql<{ seq: number }[]>`SELECT seq::int AS seq FROM signal_emissions WHERE seq > ${after} ORDER BY seq`).map(
      (r) => r.seq,
    );
  const ids = (c: StreamClient) => c.events('signal').map((f) => Number(f.id));

  it('replays what a client missed across a disconnect, then goes live, with no gap and no duplicate', async () => {
    const first = await StreamClient.open(s.url);
    expect((await first.request('subscribe', { topic: 'signal' })).data).toMatchObject({ subscribed: true, replayed: 0 });
    const e1 = await emitNext(s, clock);
    const live = await first.next((f) => f.op === 'event' && f.topic === 'signal');
    expect(live.data).toMatchObject({ id: e1.id, emitted_at: e1.emitted_at });
    const last = Number(live.id);
    first.close();
    await first.closed;

    // An observer that stays subscribed: once it has both missed emissions live, this node has
    // handed them on (a replay never goes past that, src/transport/ws/signal-feed.ts), so both are
    // replayed. Over Redis the bus message can arrive after emitNext returns.
    const observer = await StreamClient.open(s.url);
    expect((await observer.request('subscribe', { topic: 'signal' })).op).toBe('ack');
    const missed = [await emitNext(s, clock), await emitNext(s, clock)];
    await observer.next((f) => f.op === 'event' && f.topic === 'signal' && f.data?.id === missed[1]?.id);
    observer.close();
    const again = await StreamClient.open(s.url, { msgpack: true });
    const ack = await again.request('subscribe', { topic: 'signal', since: String(last) });
    expect(ack.data).toMatchObject({ subscribed: true, replayed: 2 });
    expect(again.events('signal').map((f) => f.data.id)).toEqual(missed.map((m) => m.id));
    expect(ack.data.last_id).toBe(String(Math.max(...ids(again))));
    const next = await emitNext(s, clock);
    // next() takes the frame it returns off the queue: it is the newest, so it goes last.
    const newest = await again.next((f) => f.op === 'event' && f.data?.id === next.id);
    expect([...ids(again), Number(newest.id)]).toEqual(await dbSeqs(last));
    again.close();
  });

  it('has no gap and no duplicate while emissions are made during the replay', async () => {
    const [start] = (await dbSeqs(0)).slice(-1);
    const c = await StreamClient.open(s.url);
    const emitting = (async () => {
      for (let i = 0; i < 6; i++) await emitNext(s, clock);
    })();
    // Subscribe once the emissions have begun (the first is committed), while the rest are made.
    await waitFor(async () => (await dbSeqs(start as number)).length > 0, 10_000, 'the first emission');
    const ack = await c.request('subscribe', { topic: 'signal', since: String(start) });
    expect(ack.op).toBe('ack');
    await emitting;
    const all = await dbSeqs(start as number);
    const newest = await c.next((f) => f.op === 'event' && Number(f.id) === all.at(-1));
    expect([...ids(c), Number(newest.id)]).toEqual(all);
    c.close();
  });

  /** An emission committed but not (yet) announced on the bus, as between emitSignal's commit and publish. */
  const unannounced = async () => {
    clock.advance(s.config.signalIntervalS * 1000);
    // A real emission's payload (the stream gate checks every frame's payload against the document).
    const [row] = await s.app.ctx.sql<{ id: string; seq: number; payload: unknown }[]>`
      INSERT INTO signal_emissions (id, slot, emitted_at, payload, node_id)
      SELECT gen_random_uuid(), ${slotOf(s.app.ctx, clock.now())}, ${clock.now()}, payload, 'test'
      FROM signal_emissions ORDER BY seq DESC LIMIT 1
      RETURNING id::text AS id, seq::int AS seq, payload`;
    if (!row) throw new Error('no emission to copy a payload from');
    return row as { id: string; seq: number; payload: unknown };
  };

  it('a replay never sends an emission not yet handed on live, so it is not sent twice', async () => {
    const c = await StreamClient.open(s.url);
    const row = await unannounced();
    const ack = await c.request('subscribe', { topic: 'signal', since: String(row.seq - 1) });
    expect(ack.data.replayed).toBe(0);
    await s.app.ctx.bus.publish({
      topic: 'signal',
      id: String(row.seq),
      data: { id: row.id, emitted_at: clock.now().toISOString(), payload: row.payload },
    });
    const next = await emitNext(s, clock);
    const newest = await c.next((f) => f.op === 'event' && f.data?.id === next.id);
    expect([...ids(c), Number(newest.id)]).toEqual(await dbSeqs(row.seq - 1));
    c.close();
  });

  it('fills from the database an emission the bus never delivered, in order, before the next one', async () => {
    const c = await StreamClient.open(s.url);
    expect((await c.request('subscribe', { topic: 'signal' })).op).toBe('ack');
    const lost = await unannounced();
    const next = await emitNext(s, clock);
    const newest = await c.next((f) => f.op === 'event' && f.data?.id === next.id);
    expect(c.events('signal').map((f) => f.data.id)).toEqual([lost.id]);
    expect(c.events('signal')[0]?.data.payload).toEqual(lost.payload);
    expect([...ids(c), Number(newest.id)]).toEqual(await dbSeqs(lost.seq - 1));
    c.close();
  });

  it('replays from 0 every emission in order, and refuses a malformed since', async () => {
    const c = await StreamClient.open(s.url);
    const bad = await c.request('subscribe', { topic: 'signal', since: 'yesterday' });
    expect(bad).toMatchObject({ op: 'error', error: { code: 'VALIDATION_FAILED' } });
    await schedulerOf(s.app).tick();
    const ack = await c.request('subscribe', { topic: 'signal', since: 0 });
    const all = await dbSeqs(0);
    expect(ack.data.replayed).toBe(all.length);
    expect(ids(c)).toEqual(all);
    c.close();
  });
});
