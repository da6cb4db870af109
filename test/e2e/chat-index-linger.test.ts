// The chat indexer's linger (docs/chat.md "Indexing", CHAT_INDEX_LINGER_MS): a node's posts wake
// its indexer `lingerMs` after the first of them, so the posts of that time share one step (a
// step's fixed cost is several times a message's). Counted by commons_chat_index_steps_total.
// The linger is long here (1 s) so that twenty posts sent at once are all committed within it
// (they take a few group commits, tens of milliseconds); without it the first commit's wake runs
// a step at once and the others need at least one more.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chatIndexed } from '../helpers/chat-index.js';
import { scrape, seriesValue } from '../helpers/metrics.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ CHAT_INDEX_LINGER_MS: '1000', CHAT_INDEX_POLL_MS: '60000' });
});
afterAll(async () => {
  await s.close();
});

it('posts sent within the linger are indexed in one step, within the promise', async () => {
  const poster = await register(s, 'Linger poster');
  const before = await scrape(s);
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => s.call('POST', '/api/v1/chat', { token: poster.api_token, body: { body: `linger ${i}` } })),
  );
  for (const r of answers) expect(r.status, r.text).toBe(200);
  await chatIndexed(s);
  const after = await scrape(s);
  const delta = (name: string) => seriesValue(after, name) - seriesValue(before, name);
  expect(delta('commons_chat_index_lag_seconds_count')).toBe(20);
  expect(delta('commons_chat_index_steps_total')).toBe(1);
});
