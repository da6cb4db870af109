// `subscribe {topic, since}` (DECISIONS.md "Real-time stream"): what a client missed is replayed
// from memory or chat_messages.seq, then live events follow, with no gap and no duplicate, even
// while messages are being posted during the replay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatRoom } from '../../src/domain/chat-room.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, type Frame, StreamClient } from '../helpers/stream.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(busEnv());
});
afterAll(async () => {
  await s.close();
});

const post = async (body: string) => (await s.call('POST', '/api/v1/chat', { body: { body } })).json.data as { id: string; seq: number };
const visibleSeqs = async (after: number) =>
  (
    await s.app.ctx.sql<
      { seq: number }[]
    >`SELECT seq::float8 AS seq FROM chat_messages WHERE hidden_at IS NULL AND seq > ${after} ORDER BY seq`
  ).map((r) => r.seq);
const chatIds = (frames: Frame[]) => frames.filter((f) => f.op === 'event' && f.topic === 'chat').map((f) => Number(f.id));

describe('since', () => {
  it('replays across a disconnect, then goes live, with no gap and no duplicate while others post', async () => {
    const first = await StreamClient.open(s.url, { msgpack: true });
    await first.request('subscribe', { topic: 'chat' });
    for (let i = 0; i < 3; i++) await post(`before-${i}`);
    const firstEvents: Frame[] = [];
    for (let i = 0; i < 3; i++) firstEvents.push(await first.next((f) => f.op === 'event'));
    const last = Math.max(...chatIds(firstEvents));
    const seen = (await visibleSeqs(0)).filter((x) => x <= last);
    first.close();
    await first.closed;
    for (let i = 0; i < 4; i++) await post(`missed-${i}`);

    const again = await StreamClient.open(s.url);
    const posting = (async () => {
      const out: number[] = [];
      for (let i = 0; i < 12; i++) out.push((await post(`during-${i}`)).seq);
      return out;
    })();
    const ack = await again.request('subscribe', { topic: 'chat', since: String(last) });
    expect(ack).toMatchObject({ op: 'ack', data: { topic: 'chat', subscribed: true } });
    expect(ack.data.replayed).toBeGreaterThanOrEqual(4);
    const during = await posting;
    const lastPosted = during.at(-1) as number;
    await again.next((f) => f.op === 'event' && Number(f.id) === lastPosted);
    const got = [...seen, ...chatIds(again.frames), lastPosted];
    expect(got).toEqual(await visibleSeqs(0));
    expect(new Set(got).size).toBe(got.length);
    again.close();
  });

  it('replays from the database beyond memory, skips hidden messages, and settles a hole left by writes it never heard of', async () => {
    // 1100 rows written behind the bus's back: the next published message leaves a hole that the
    // room fills from the database before handing that message on.
    // (0 when this test runs first.)
    const start = (await visibleSeqs(0)).at(-1) ?? 0;
    await s.app.ctx.sql`INSERT INTO chat_messages (body, guest_number) SELECT 'bulk-' || g, 1 FROM generate_series(1, 1100) g`;
    // Hidden behind the bus's back too (the operator API would announce it): SQL on purpose.
    await s.app.ctx.sql`UPDATE chat_messages SET hidden_at = now() WHERE body = 'bulk-500'`;
    const live = await StreamClient.open(s.url);
    await live.request('subscribe', { topic: 'chat' });
    const after = await post('after-bulk');
    await live.next((f) => f.op === 'event' && Number(f.id) === after.seq, 10_000);
    const liveIds = [...chatIds(live.frames), after.seq];
    expect(liveIds.length).toBe(1100);
    expect(liveIds).toEqual(await visibleSeqs(start));
    live.close();

    const fresh = await StreamClient.open(s.url, { msgpack: true });
    const ack = await fresh.request('subscribe', { topic: 'chat', since: 0 });
    const all = await visibleSeqs(0);
    expect(ack.data.replayed).toBe(all.length);
    expect(chatIds(fresh.frames)).toEqual(all);
    expect(fresh.frames.some((f) => f.data?.body === 'bulk-500')).toBe(false);
    fresh.close();
  });

  it('a new node view agrees with the database page by page (memory floor and database path)', async () => {
    const room = new ChatRoom(s.app.ctx);
    await room.start();
    const head = room.lastSeq;
    const fromStart = await room.replay(0, 50);
    expect(fromStart.map((m) => m.seq)).toEqual((await visibleSeqs(0)).slice(0, 50));
    const tail = (await visibleSeqs(head - 20)).filter((x) => x <= head);
    expect((await room.replay(head - 20, 100)).map((m) => m.seq)).toEqual(tail);
    room.close();
  });
});
