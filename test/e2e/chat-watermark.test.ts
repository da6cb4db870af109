// The chat's watermark (issue 47; docs/chat.md "The watermark"): groups of posts draw their seqs
// without a lock held through their commit, so a later group may commit while an earlier one is
// still in its commit. Every reader of seq order after a cursor stops below the earlier group until
// it has committed or rolled back: the indexer's cursor, the stream (live order and a replay after
// `since`), the node's chat room and the newest page it serves. Then both are seen, in seq order;
// or, the earlier one rolled back, its seqs are skipped and the later one is delivered.
//
// Group A is a transaction of the test's own on the node's pool (the node's own write path,
// store.insertMessages, in it), held open after its seqs were drawn; group B is an ordinary post,
// which must commit meanwhile (under the old chat lock it waited for A: this test hung). Two
// transactions at once need a real PostgreSQL (PGlite serves one connection at a time).
import { randomUUID } from 'node:crypto';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexChat } from '../../src/domain/chat.js';
import * as store from '../../src/store/chat.js';
import { lockWaiter } from '../helpers/db.js';
import { register, startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { busEnv, type Frame, StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
beforeAll(async () => {
  // The indexer is run by the test (indexChat), so "not past A" is a step that ran, not a race.
  s = await startTestServer({ ...busEnv(), CHAT_INDEXER: 'off' });
});
afterAll(async () => {
  await s.close();
});

const post = async (body: string) => {
  const r = await s.call('POST', '/api/v1/chat', { body: { body } });
  expect(r.status, r.text).toBe(200);
  return Number(r.json.data.seq);
};
const chatIds = (frames: Frame[]) => frames.filter((f) => f.op === 'event' && f.topic === 'chat').map((f) => Number(f.id));
const room = () => {
  const r = s.app.ctx.services.chatRoom;
  if (!r) throw new Error('no chat room');
  return r;
};
const newestPage = async () => {
  const r = await s.call('GET', '/api/v1/chat?limit=100');
  expect(r.status, r.text).toBe(200);
  return r.json.data.messages.map((m: { seq: string | number }) => Number(m.seq)) as number[];
};
const replayAfter = async (since: number) => {
  const c = await StreamClient.open(s.url);
  const ack = await c.request('subscribe', { topic: 'chat', since: String(since) });
  const ids = chatIds(c.frames);
  c.close();
  return { replayed: ack.data.replayed as number, ids };
};
/** Indexes until nothing is left below the watermark; returns the cursor. */
const indexAll = async () => {
  while ((await indexChat(s.app.ctx)) > 0) {}
  return store.indexedSeq(s.app.ctx.sql);
};
/** The chat room has heard of B and waits, in the database, for the groups in flight below it. */
const roomWaitingForA = () => lockWaiter(s, 'chat_watermark_wait', "the chat room waiting for A's commit");

/** Group A: one post (a guest's, or the given member's) appended in a transaction held open until
 * `end` says commit or roll back. */
function holdGroupA(body: string, authorId: number | null = null) {
  let drawn: (seq: number) => void = () => {};
  let end: (commit: boolean) => void = () => {};
  const seq = new Promise<number>((ok) => {
    drawn = ok;
  });
  const decided = new Promise<boolean>((ok) => {
    end = ok;
  });
  const done = s.app.ctx.sql
    .begin(async (tx) => {
      const [a] = await store.insertMessages(tx as unknown as Sql, [
        authorId === null
          ? { id: randomUUID(), body, authorId, guestNumber: 47_000_001, guestLabel: 'held', at: new Date(), mentions: [] }
          : { id: randomUUID(), body, authorId, guestNumber: null, guestLabel: null, at: new Date(), mentions: [] },
      ]);
      if (!a) throw new Error('group A was refused');
      drawn(a.seq);
      if (!(await decided)) throw new Error('rolled back (test)');
    })
    .then(
      () => 'committed',
      (err: Error) => err.message,
    );
  return { seq, end, done };
}

describe.runIf(usingRealPostgres())('a group committing while a lower one is still in its commit', () => {
  it('readers stop below the lower group until it commits, then see both in seq order', async () => {
    const base = await post('before the watermark test');
    await waitFor(() => room().lastSeq >= base, 10_000, 'the room settling the base post');
    expect(await indexAll()).toBeGreaterThanOrEqual(base);
    const live = await StreamClient.open(s.url);
    await live.request('subscribe', { topic: 'chat' });

    const a = holdGroupA('group A, held in its commit');
    const aSeq = await a.seq;
    const bSeq = await post('group B, committed while A is open');
    expect(bSeq).toBeGreaterThan(aSeq);
    await roomWaitingForA();

    const [w] = await s.app.ctx.sql<{ w: number }[]>`SELECT chat_watermark()::float8 AS w`;
    expect(w?.w).toBe(aSeq - 1);
    expect(await indexAll()).toBeLessThan(aSeq);
    expect(room().lastSeq).toBeLessThan(aSeq);
    expect(await replayAfter(base)).toEqual({ replayed: 0, ids: [] });
    expect(await newestPage()).not.toContain(bSeq);
    expect(chatIds(live.frames)).toEqual([]);

    a.end(true);
    expect(await a.done).toBe('committed');
    // next() takes the frame it waited for off the queue: what came before it stays.
    await live.next((f) => f.op === 'event' && Number(f.id) === bSeq, 10_000);
    expect([...chatIds(live.frames), bSeq]).toEqual([aSeq, bSeq]);
    expect(await indexAll()).toBe(bSeq);
    expect(await replayAfter(base)).toEqual({ replayed: 2, ids: [aSeq, bSeq] });
    expect((await newestPage()).slice(-2)).toEqual([aSeq, bSeq]);
    live.close();
  });

  it('a lower group rolled back: its seqs are skipped for ever, the later group is delivered', async () => {
    const base = await post('before the rollback test');
    await waitFor(() => room().lastSeq >= base, 10_000, 'the room settling the base post');
    expect(await indexAll()).toBeGreaterThanOrEqual(base);
    const live = await StreamClient.open(s.url);
    await live.request('subscribe', { topic: 'chat' });

    const a = holdGroupA('group A, to be rolled back');
    const aSeq = await a.seq;
    const bSeq = await post('group B, committed while A is open');
    expect(bSeq).toBeGreaterThan(aSeq);
    await roomWaitingForA();
    expect(await indexAll()).toBeLessThan(aSeq);
    expect(room().lastSeq).toBeLessThan(aSeq);
    expect(await replayAfter(base)).toEqual({ replayed: 0, ids: [] });
    expect(chatIds(live.frames)).toEqual([]);

    a.end(false);
    expect(await a.done).toBe('rolled back (test)');
    await live.next((f) => f.op === 'event' && Number(f.id) === bSeq, 10_000);
    expect(chatIds(live.frames)).toEqual([]);
    expect(await indexAll()).toBe(bSeq);
    expect(await replayAfter(base)).toEqual({ replayed: 1, ids: [bSeq] });
    const page = await newestPage();
    expect(page).not.toContain(aSeq);
    expect(page.at(-1)).toBe(bSeq);
    const [{ n } = { n: -1 }] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chat_messages WHERE seq = ${aSeq}`;
    expect(n).toBe(0);
    live.close();
  });

  it("a reader's shared hold on a group's range key (chat_watermark_wait's) is no group in flight", async () => {
    const last = await post('after the held groups');
    await s.app.ctx.sql.begin(async (tx) => {
      const [first] = await tx<{ w: number }[]>`SELECT chat_watermark()::float8 AS w`;
      expect(first?.w).toBeGreaterThanOrEqual(last);
      // As a reader holds the key of a group it waited for, until its statement ends.
      await tx`SELECT pg_advisory_xact_lock_shared(chat_group_key(${last}::bigint))`;
      const [held] = await tx<{ w: number }[]>`SELECT chat_watermark()::float8 AS w`;
      expect(held?.w).toBeGreaterThanOrEqual(last);
    });
  });

  it("a member's export, paged by seq, stops below their own post still in its commit", async () => {
    const m = await register(s, 'Export Ema');
    const id = Number(m.registration_number.slice(3));
    const exported = async () => {
      const r = await fetch(`${s.url}/api/v1/ai/me/export`, { headers: { authorization: `Bearer ${m.api_token}` } });
      expect(r.status).toBe(200);
      return ((await r.json()) as { chat_messages: { body: string }[] }).chat_messages.map((x) => x.body);
    };
    const a = holdGroupA('Ema A, held', id);
    await a.seq;
    const r = await s.call('POST', '/api/v1/chat', { token: m.api_token, body: { body: 'Ema B' } });
    expect(r.status, r.text).toBe(200);
    expect(await exported()).toEqual([]);
    a.end(true);
    expect(await a.done).toBe('committed');
    expect(await exported()).toEqual(['Ema A, held', 'Ema B']);
  });
});
