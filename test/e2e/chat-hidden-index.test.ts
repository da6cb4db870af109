// A chat message hidden around its indexing (docs/chat.md "Indexing"; sql/033_chat_search.sql):
// hidden content is never found and never reaches the inboxes of the members it names, whether the
// hide comes before the indexer's step, after it, or while a step holding that message is in
// flight (the hide waits for the step's cursor lock, then deletes what the step wrote). The
// indexer is off in these servers: the tests run its steps themselves (indexChat), so "before"
// and "in flight" are made, not raced for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexChat } from '../../src/domain/chat.js';
import { lockWaiter } from '../helpers/db.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { register, startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ OPERATOR_TOKEN: OP, CHAT_INDEXER: 'off' });
});
afterAll(async () => {
  await s.close();
});

const post = async (token: string, body: string): Promise<{ id: string; seq: number }> => {
  const r = await s.call('POST', '/api/v1/chat', { token, body: { body } });
  expect(r.status, r.text).toBe(200);
  return { id: r.json.data.id, seq: Number(r.json.data.seq) };
};
const hide = (id: string) =>
  s.call('POST', '/api/v1/operator/hide', { token: OP, body: { target_type: 'chat_message', target_id: id, reason: 'test' } });
const found = async (word: string): Promise<string[]> => {
  const r = await s.call('GET', `/api/v1/search?type=chat&q=${word}`);
  expect(r.status, r.text).toBe(200);
  return r.json.data.hits.map((h: { id: string }) => h.id);
};
const mentionsOf = async (token: string): Promise<string[]> => {
  const r = await s.call('GET', '/api/v1/inbox', { token });
  expect(r.status, r.text).toBe(200);
  return r.json.data.items.filter((i: { kind: string }) => i.kind === 'mention').map((i: { subject: { id: string } }) => i.subject.id);
};
const state = async (id: string) => {
  const [row] = await s.app.ctx.sql<{ search_rows: number; points: number }[]>`
    SELECT (SELECT count(*)::int FROM chat_search WHERE id = ${id}) AS search_rows,
      (SELECT count(*)::int FROM point_events WHERE kind = 'chat_message' AND ref = ${id}) AS points`;
  return row;
};

describe('a hidden chat message is neither found nor announced, however the hide meets the indexer', () => {
  it('hidden before its step: the step skips its search row and mention items, and keeps its point', async () => {
    const [ann, bob] = [await register(s, 'Hidden Ann'), await register(s, 'Hidden Bob')];
    const shown = await post(bob.api_token, `visible narwhal for @${ann.registration_number}`);
    const hidden = await post(bob.api_token, `secret narwhal for @${ann.registration_number}`);
    expect((await hide(hidden.id)).status).toBe(200);
    expect(await indexChat(s.app.ctx)).toBeGreaterThanOrEqual(2);
    expect(await found('narwhal')).toEqual([shown.id]);
    expect(await mentionsOf(ann.api_token)).toEqual([shown.id]);
    expect(await state(hidden.id)).toEqual({ search_rows: 0, points: 1 });
    expect(await state(shown.id)).toEqual({ search_rows: 1, points: 1 });
  });

  it('hidden after its step: its search row and mention items are deleted with the hide', async () => {
    const [ann, bob] = [await register(s, 'After Ann'), await register(s, 'After Bob')];
    const m = await post(bob.api_token, `indexed okapi for @${ann.registration_number}`);
    await indexChat(s.app.ctx);
    expect(await found('okapi')).toEqual([m.id]);
    expect(await mentionsOf(ann.api_token)).toEqual([m.id]);
    expect((await hide(m.id)).status).toBe(200);
    expect(await found('okapi')).toEqual([]);
    expect(await mentionsOf(ann.api_token)).toEqual([]);
    expect(await state(m.id)).toEqual({ search_rows: 0, points: 1 });
  });

  // A step held open in a transaction of the test's own while the hide is sent: PGlite serves one
  // connection at a time, so the two can only meet on a real PostgreSQL.
  it.runIf(usingRealPostgres())(
    'hidden while a step holding it is in flight: the hide waits for the step, then deletes what it wrote',
    async () => {
      const [ann, bob] = [await register(s, 'Flight Ann'), await register(s, 'Flight Bob')];
      const m = await post(bob.api_token, `inflight quagga for @${ann.registration_number}`);
      const sent: { hide?: ReturnType<typeof hide> } = {};
      await s.app.ctx.sql.begin(async (tx) => {
        const [step] = await tx<{ indexed: number }[]>`SELECT indexed FROM chat_index_next(500, 'http://x')`;
        expect(step?.indexed).toBeGreaterThanOrEqual(1);
        sent.hide = hide(m.id);
        // The barrier: the hide's backend is waiting for the cursor lock this step holds.
        await lockWaiter(s, 'FROM chat_index FOR UPDATE', 'the hide waiting for the indexer step');
      });
      expect((await sent.hide)?.status).toBe(200);
      expect(await found('quagga')).toEqual([]);
      expect(await mentionsOf(ann.api_token)).toEqual([]);
      expect(await state(m.id)).toEqual({ search_rows: 0, points: 1 });
    },
  );
});
