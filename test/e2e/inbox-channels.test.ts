// One member's inbox seen the three ways DECISIONS.md "Inbox" promises, for each kind from its real
// cause: over REST, on the stream topic `inbox`, and at a webhook receiver (signatures checked
// with the `standardwebhooks` package). All three carry the same items, in the same id order.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chatIndexed } from '../helpers/chat-index.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';
import { type Member, member, move, post } from '../helpers/tasks.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = 'the channels test secret';
let s: TestServer;
let rec: Receiver;
beforeAll(async () => {
  s = await startTestServer({ INBOX_WEBHOOK_BACKOFF_MS: '10' });
  rec = await startReceiver(() => 200);
});
afterAll(async () => {
  await s.close();
  await rec.close();
});

it('mention, reply, task, vote, dm and badge items reach REST, the stream and the webhook alike', async () => {
  const me: Member = await member(s, 'Watcher');
  const other: Member = await member(s, 'Other');
  expect((await s.call('PUT', '/api/v1/inbox/webhook', { token: me.token, body: { callback_url: rec.url, secret: SECRET } })).status).toBe(
    200,
  );
  const stream = await StreamClient.open(s.url, { token: me.token });
  try {
    expect((await stream.request('subscribe', { topic: 'inbox', since: '0' })).op).toBe('ack');
    const call = (path: string, body: unknown, who: Member = other) => s.call('POST', path, { token: who.token, body });
    // mention (chat)
    expect((await call('/api/v1/chat', { body: `hi @${me.number}` })).status).toBe(200);
    await chatIndexed(s); // its mention item is written after the answer (docs/chat.md "Indexing")
    // reply (a comment on my post)
    const p = await call('/api/v1/posts', { post_type: 'discussion', title: 'Mine', body: 'b' }, me);
    expect((await call(`/api/v1/posts/${p.json.data.id}/comments`, { body: 'a reply' })).status).toBe(200);
    // task (my task claimed)
    const task = await post(s, me, 1, 'My task');
    expect((await move(s, other, task, 'claim')).status).toBe(200);
    // vote (the first vote on my proposal)
    const pr = await call('/api/v1/habitat/proposals', { title: 'My proposal', body: 'b' }, me);
    expect((await call(`/api/v1/habitat/proposals/${pr.json.data.id}/votes`, { choice: 'yes' })).status).toBe(200);
    // badge (points reach bronze; written by the score trigger, announced by nothing), then a dm.
    // The points by SQL: the trigger follows any point event, and through the API 40 points take
    // many actions, each with effects of its own, for nothing this test checks.
    await s.app.ctx.sql`INSERT INTO point_events (identity_id, kind, points) VALUES (${me.id}, 'post', 40)`;
    expect((await call(`/api/v1/dm/${me.number}`, { body: 'a direct message' })).status).toBe(200);

    const rest = (await s.call('GET', '/api/v1/inbox?since=0', { token: me.token })).json.data.items as { id: string; kind: string }[];
    expect(rest.map((i) => i.kind)).toEqual(['mention', 'reply', 'task', 'vote', 'badge', 'dm']);
    await waitFor(() => stream.events('inbox').length >= rest.length, 10_000, 'every item on the stream');
    expect(stream.events('inbox').map((f) => f.data)).toEqual(rest);
    await waitFor(() => rec.requests.length >= rest.length, 15_000, 'every item at the webhook');
    const wh = new Webhook(Buffer.from(SECRET).toString('base64'));
    const pushed = rec.requests.map((r) => (wh.verify(r.body, r.headers as Record<string, string>) as { data: unknown }).data);
    expect(pushed).toEqual(rest);
    expect(rec.requests.map((r) => r.headers['webhook-id'])).toEqual(rest.map((i) => `inbox-${me.number}-${i.id}`));
  } finally {
    stream.close();
  }
});
