// Inbox kinds from their real causes (DECISIONS.md "Inbox"): mentions in chat (over HTTP, over
// the stream, from guests, and many posts group-committed together), and every task move that
// concerns a member, deadlines included. Each item is written with its cause or not at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteClosedProposals } from '../../src/domain/proposal-close.js';
import { runDue } from '../../src/domain/task-deadlines.js';
import { chatIndexed } from '../helpers/chat-index.js';
import { countRows } from '../helpers/db.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';
import { type Member, member, move, post, submit } from '../helpers/tasks.js';

const H = 3600_000;
const clock = new TestClock();
let s: TestServer;
let alice: Member;
let bob: Member;
beforeAll(async () => {
  s = await startTestServer({}, { clock });
  alice = await member(s, 'Alice');
  bob = await member(s, 'Bob');
});
afterAll(async () => {
  await s.close();
});

type Item = { id: string; kind: string; actor: string | null; subject: { type: string; id: string; url: string }; excerpt: string };
const itemsOf = async (m: Member, since = '0'): Promise<Item[]> => {
  const r = await s.call('GET', `/api/v1/inbox?since=${since}&limit=100`, { token: m.token });
  expect(r.status).toBe(200);
  return r.json.data.items;
};
const lastId = async (m: Member): Promise<string> => (await itemsOf(m)).at(-1)?.id ?? '0';

describe('mentions in chat', () => {
  it('a member and a guest mentioning a member in chat get mention items for the message', async () => {
    const from = await lastId(bob);
    const r = await s.call('POST', '/api/v1/chat', { token: alice.token, body: { body: `hello @${bob.number} and @${alice.number}` } });
    expect(r.status).toBe(200);
    const g = await s.call('POST', '/api/v1/chat', { body: { body: `guest says hi @${bob.number}`, name: 'Visitor' } });
    expect(g.status).toBe(200);
    await chatIndexed(s); // chat mentions' items are written after the answers (docs/chat.md "Indexing")
    const got = await itemsOf(bob, from);
    expect(got.map((i) => [i.kind, i.actor, i.subject.type, i.subject.id, i.excerpt])).toEqual([
      ['mention', alice.number, 'chat_message', r.json.data.id, `hello @${bob.number} and @${alice.number}`],
      ['mention', g.headers.get('x-commons-guest'), 'chat_message', g.json.data.id, `guest says hi @${bob.number}`],
    ]);
    expect(got[0]?.subject.url).toBe(`${s.url}/api/v1/chat`);
    // Naming oneself notifies nobody.
    expect(await countRows(s, 'inbox_items', `identity_id = ${alice.id}`)).toBe(0);
  });

  it('mentions sent over the stream and many posts committed together each reach their member once', async () => {
    const from = await lastId(bob);
    const c = await StreamClient.open(s.url, { token: alice.token });
    try {
      const ack = await c.request('chat', { body: `stream @${bob.number}` });
      expect(ack.op).toBe('ack');
    } finally {
      c.close();
    }
    const posts = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        s.call('POST', '/api/v1/chat', { token: alice.token, body: { body: `burst ${i} @${bob.number}` } }),
      ),
    );
    expect(posts.every((p) => p.status === 200)).toBe(true);
    await chatIndexed(s);
    const got = await itemsOf(bob, from);
    expect(got.length).toBe(31);
    expect(got[0]?.excerpt).toBe(`stream @${bob.number}`);
    expect(new Set(got.map((i) => i.subject.id))).toEqual(new Set([got[0]?.subject.id, ...posts.map((p) => p.json.data.id)]));
    // Ids are dense: every item of the member, in order.
    expect(got.map((i) => Number(i.id))).toEqual(Array.from({ length: 31 }, (_, i) => Number(from) + 1 + i));
  });
});

describe('task moves', () => {
  it('claimed, delivered and approved reach the member each concerns, not the one who moved', async () => {
    const pFrom = await lastId(alice);
    const sFrom = await lastId(bob);
    const id = await post(s, alice, 5, `Map the relays for @${bob.number}`);
    expect((await move(s, bob, id, 'claim')).status).toBe(200);
    expect((await submit(s, bob, id)).status).toBe(200);
    expect((await move(s, alice, id, 'approve')).status).toBe(200);
    const url = `${s.url}/api/v1/habitat/tasks/${id}`;
    const title = `Map the relays for @${bob.number}`;
    expect((await itemsOf(alice, pFrom)).map((i) => [i.kind, i.actor, i.subject, i.excerpt])).toEqual([
      ['task', bob.number, { type: 'task', id, url }, `claimed: ${title}`],
      ['task', bob.number, { type: 'task', id, url }, `delivered: ${title}`],
    ]);
    // (The 30 points of the solve also reach a badge tier: that item is the badges test's concern.)
    expect((await itemsOf(bob, sFrom)).filter((i) => i.kind !== 'badge').map((i) => [i.kind, i.actor, i.excerpt])).toEqual([
      ['mention', alice.number, `${title}\nDetails of the task.`.replace(/\s+/g, ' ')],
      ['task', alice.number, `approved: ${title}`],
    ]);
  });

  it('a refused move writes no item', async () => {
    const id = await post(s, alice, 5, 'Second task');
    const n = await countRows(s, 'inbox_items');
    expect((await move(s, alice, id, 'claim')).status).toBe(403);
    expect((await move(s, bob, id, 'approve')).status).toBe(403);
    expect(await countRows(s, 'inbox_items')).toBe(n);
  });

  it('deadlines: expired, claim lapsed and auto-approved come from the service (actor null)', async () => {
    const pFrom = await lastId(alice);
    const sFrom = await lastId(bob);
    const expiring = await post(s, alice, 1, 'Nobody wants this');
    const lapsing = await post(s, alice, 1, 'Claimed and forgotten');
    expect((await move(s, bob, lapsing, 'claim')).status).toBe(200);
    const auto = await post(s, alice, 1, 'Delivered, never reviewed');
    expect((await move(s, bob, auto, 'claim')).status).toBe(200);
    expect((await submit(s, bob, auto)).status).toBe(200);
    clock.advance(25 * H);
    await runDue(s.app.ctx);
    clock.advance(48 * H);
    await runDue(s.app.ctx);
    clock.advance(96 * H);
    await runDue(s.app.ctx);
    const ours = (i: Item) => i.actor === null && [expiring, lapsing, auto].includes(i.subject.id);
    const mine = (await itemsOf(alice, pFrom)).filter(ours).map((i) => [i.subject.id, i.excerpt]);
    expect(mine).toEqual([
      [lapsing, 'claim lapsed: Claimed and forgotten'],
      [expiring, 'expired: Nobody wants this'],
    ]);
    const theirs = (await itemsOf(bob, sFrom)).filter(ours).map((i) => [i.subject.id, i.excerpt]);
    expect(theirs).toEqual([
      [auto, 'auto-approved: Delivered, never reviewed'],
      [lapsing, 'claim lapsed: Claimed and forgotten'],
    ]);
  });
});

describe('votes', () => {
  it('the first vote on a proposal reaches its author; later votes and changed votes do not', async () => {
    const carol = await member(s, 'Carol');
    const from = await lastId(alice);
    const p = await s.call('POST', '/api/v1/habitat/proposals', {
      token: alice.token,
      body: { title: 'Plant a tree', body: 'in the habitat' },
    });
    expect(p.status).toBe(200);
    const id = p.json.data.id as string;
    const vote = (m: Member, choice: string) =>
      s.call('POST', `/api/v1/habitat/proposals/${id}/votes`, { token: m.token, body: { choice } });
    expect((await vote(alice, 'yes')).status).toBe(200);
    expect((await vote(bob, 'no')).status).toBe(200);
    expect((await vote(bob, 'yes')).status).toBe(200);
    expect((await vote(carol, 'abstain')).status).toBe(200);
    const url = `${s.url}/api/v1/habitat/proposals/${id}`;
    // Only this proposal's items: the 72 hours advanced below also expire the earlier tests' tasks
    // (the deadline actor's own items, whenever its tick falls in between).
    const aboutIt = async (since: string) =>
      (await itemsOf(alice, since)).filter((i) => i.subject?.id === id).map((i) => [i.kind, i.actor, i.subject, i.excerpt]);
    expect(await aboutIt(from)).toEqual([['vote', bob.number, { type: 'proposal', id, url }, 'first vote: Plant a tree']]);
    // Its close (72 h later) brings the tally, once, however many passes run.
    const last = await lastId(alice);
    clock.advance(71 * H);
    await noteClosedProposals(s.app.ctx);
    expect(await aboutIt(last)).toEqual([]);
    clock.advance(H);
    await noteClosedProposals(s.app.ctx);
    await noteClosedProposals(s.app.ctx);
    expect(await aboutIt(last)).toEqual([['vote', null, { type: 'proposal', id, url }, 'closed: Plant a tree (yes 2, no 0, abstain 1)']]);
  });
});

describe('badges', () => {
  it('each badge tier reached writes one item with the points that reached it, and never again', async () => {
    const dora = await member(s, 'Dora');
    // Real point events: the score trigger (sql/005) and the badge item (sql/016) follow them.
    const points = (n: number) => s.app.ctx.sql`INSERT INTO point_events (identity_id, kind, points) VALUES (${dora.id}, 'post', ${n})`;
    await points(29);
    expect(await itemsOf(dora)).toEqual([]);
    await points(1);
    await points(75);
    await points(-50);
    await points(50);
    const got = (await itemsOf(dora)).map((i) => [i.kind, i.actor, i.subject, i.excerpt]);
    expect(got).toEqual([
      ['badge', null, { type: 'badge', id: 'bronze', url: null }, 'badge tier reached: bronze (activity score 30)'],
      ['badge', null, { type: 'badge', id: 'silver', url: null }, 'badge tier reached: silver (activity score 105)'],
    ]);
  });
});
