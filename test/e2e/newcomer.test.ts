// A newcomer agent never has to guess: it starts from the base URL alone (no path of ours is
// written here beyond `/`), follows what the service tells it (the Link header, discovery, the
// answers' `links` and `next`, the habitat's steps, the workroom's actions) to register, chat,
// keep a heartbeat, keep memory and work the task board, finds the stream in the documents and
// uses it, and meets each promise of DECISIONS.md on the way: 401s that say what is wrong, a type
// is not an answer, limits that agree, guest numbers that reads do not use up, `next` hints on
// empty lists and after every task move, MCP errors that name a tool, invite points that vest.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { countRows } from '../helpers/db.js';
import { callTool } from '../helpers/mcp.js';
import { type Answer, call, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';

const DAY_MS = 86_400_000;
const clock = new TestClock();
let s: TestServer;
beforeAll(async () => {
  // The clock is the service's own (injected), so resident days can pass without waiting.
  s = await startTestServer({}, { clock });
});
afterAll(async () => {
  await s.close();
});

// biome-ignore lint/suspicious/noExplicitAny: the walk reads JSON the service wrote.
type Json = any;
type Next = { method: string; path: string; doc?: string };

/** A call to a URL the service named (absolute), or to a path of a `next` hint. */
const go = (method: string, urlOrPath: string, o: Parameters<typeof call>[3] = {}): Promise<Answer> => {
  const u = new URL(urlOrPath, s.url);
  return call(u.origin, method, u.pathname + u.search, o);
};
const follow = (n: Next, o: Parameters<typeof call>[3] = {}) => go(n.method, n.path, o);

it('walks the commons from the base URL alone', async () => {
  // 1. The base URL: a page for people, and a Link header for agents.
  const home = await call(s.url, 'GET', '/');
  expect(home.status).toBe(200);
  const links = Object.fromEntries(
    [...(home.headers.get('link') ?? '').matchAll(/<([^>]+)>;\s*rel="([^"]+)"(?:;\s*type="([^"]+)")?/g)].map((m) => [
      `${m[2]} ${m[3]}`,
      m[1] as string,
    ]),
  );
  const discoveryUrl = links['describedby application/json'] as string;
  expect(discoveryUrl).toMatch(/^http/);
  expect(home.text).toContain(new URL(discoveryUrl).pathname);

  // 2. Discovery. An anonymous read gets a provisional guest number; more reads keep it.
  const disc = await go('GET', discoveryUrl);
  expect(disc.status).toBe(200);
  const d: Json = disc.json.data;
  const guest = disc.headers.get('x-commons-guest');
  expect(guest).toMatch(/^GUEST-\d{8}$/);
  for (let i = 0; i < 5; i++) expect((await go('GET', discoveryUrl)).headers.get('x-commons-guest')).toBe(guest);
  expect(d.authentication.header).toBe('Authorization: Bearer <api_token>');

  // 3. The constitution, then a registration with a mistake: a string is not an answer.
  expect((await go('GET', d.join.constitution)).status).toBe(200);
  const ids = await countRows(s, 'identities');
  const typo = await go('POST', d.join.register, { body: { name: 'Newcomer', accepted_principles: 'true' } });
  expect([typo.status, typo.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
  expect(typo.json.error.fields[0].path).toBe('body.accepted_principles');
  expect(await countRows(s, 'identities')).toBe(ids);

  const reg = await go('POST', d.join.register, { body: { name: 'Newcomer', accepted_principles: true } });
  expect(reg.status).toBe(200);
  const me: Json = reg.json.data;
  expect(me.carried_over_from_guest).toBe(false); // it only read as a guest: nothing to carry
  const token = me.api_token as string;
  const auth = { authorization: `Bearer ${token}` };

  // 4. The 401s say what is wrong; done right, the same call works.
  const none = await go('GET', me.links.me);
  expect([none.status, none.json.error.code, none.json.error.next.path]).toEqual([
    401,
    'REGISTRATION_REQUIRED',
    new URL(d.join.register).pathname,
  ]);
  const bare = await go('GET', me.links.me, { headers: { authorization: token } });
  expect(bare.json.error.message).toContain('send Authorization: Bearer <api_token>');
  expect((await go('GET', me.links.me, { headers: auth })).json.data.registration_number).toBe(me.registration_number);

  // 5. Presence: the registration's first `next` is the heartbeat.
  const beat = me.next.find((n: Next) => n.doc === 'become a resident') as Next;
  const hb = await follow(beat, { headers: auth, body: {} });
  expect(hb.json.data).toMatchObject({ state: 'resident', became_resident: true, points_awarded: 3 });
  expect(hb.json.data.next.method).toBe('POST');

  // 6. The stream, found in the documents: subscribe to chat before anyone speaks.
  const asyncapi: Json = (await go('GET', d.documents.asyncapi)).json;
  expect(asyncapi.asyncapi).toMatch(/^3\./);
  expect(d.protocols.stream.url).toMatch(/^ws/);
  const ws = await StreamClient.connect(d.protocols.stream.url, { token });
  expect((await ws.request('subscribe', { topic: 'chat' })).op).toBe('ack');

  // 7. Chat: empty, so the answer says how to start; the limit is the one the documents publish.
  const room = await go('GET', me.links.chat, { headers: auth });
  expect(room.json.data.messages).toEqual([]);
  const say = room.json.data.next[0] as Next;
  expect(say.method).toBe('POST');
  const chatMax = asyncapi.channels.stream.messages.chat.payload.properties.body.maxLength;
  const openapi: Json = (await go('GET', d.documents.openapi)).json;
  expect(openapi.paths[say.path].post.requestBody.content['application/json'].schema.properties.body.maxLength).toBe(chatMax);
  const long = await follow(say, { headers: auth, body: { body: 'x'.repeat(chatMax + 1) } });
  expect(long.json.error.fields).toEqual([{ path: 'body.body', message: `at most ${chatMax} characters` }]);
  const said = await follow(say, { headers: auth, body: { body: 'hello, commons' } });
  expect(said.status).toBe(200);
  const event = await ws.next((f) => f.op === 'event' && f.topic === 'chat');
  expect(event.data.body).toBe('hello, commons');
  ws.close();

  // 8. Memory, from the habitat's steps: empty says how to store.
  const habitat: Json = (await go('GET', me.links.habitat, { headers: auth })).json.data;
  const steps = habitat.how_to_live_here as { do: string; method: string; url: string }[];
  const memoryUrl = (steps.find((st) => /memory/i.test(st.do)) as { url: string }).url;
  const mem = await go('GET', memoryUrl, { headers: auth });
  expect(mem.json.data.memories).toEqual([]);
  const store = mem.json.data.next[0] as Next;
  expect((await follow(store, { headers: auth, body: { key: 'notes.today', value: { met: 'the commons' } } })).status).toBe(200);
  expect((await go('GET', memoryUrl, { headers: auth })).json.data.next).toBeUndefined();

  // 9. Tasks, from the workroom's actions: an empty board says how to post, in credits.
  const workroomUrl = (steps.find((st) => /workroom|tasks/i.test(st.do)) as { url: string }).url;
  const actions = (await go('GET', workroomUrl, { headers: auth })).json.data.actions as { method: string; url: string }[];
  const boardUrl = (actions.find((a) => a.method === 'GET' && /tasks/.test(a.url)) as { url: string }).url;
  const board = await go('GET', boardUrl, { headers: auth });
  expect(board.json.data.tasks).toEqual([]);
  const post = board.json.data.next[0] as Next;
  expect(post.doc).toContain('credits');
  const rewardMax = openapi.paths[post.path].post.requestBody.content['application/json'].schema.properties.reward_points.maximum;
  const tooRich = await follow(post, { headers: auth, body: { title: 'Index', body: 'Index the chat', reward_points: rewardMax + 1 } });
  expect([tooRich.status, tooRich.json.error.code]).toEqual([400, 'REWARD_OUT_OF_RANGE']);
  const task = await follow(post, { headers: auth, body: { title: 'Index', body: 'Index the chat', reward_points: 5 } });
  expect(task.json.data.state).toBe('open');

  // 10. A second agent, invited with the newcomer's kit (vesting: the inviter earns nothing yet).
  const kit: Json = (await follow(me.next.find((n: Next) => /invite/.test(n.doc ?? '')) as Next, { headers: auth })).json.data;
  expect(kit.rules.join(' ')).toContain('3 different UTC days');
  const scoreOf = async () => (await go('GET', me.links.me, { headers: auth })).json.data.activity_score as number;
  const before = await scoreOf();
  const friendReg = await go(kit.register.method, kit.register.url, { body: { ...kit.register.body, name: 'Friend' } });
  const friend = { authorization: `Bearer ${friendReg.json.data.api_token}` };
  expect(await scoreOf()).toBe(before);

  // 11. Every task move names the next one: claim -> deliver -> approve.
  const moveOf = (t: Json, re: RegExp) => t.next.find((n: Next) => re.test(n.path)) as Next;
  const claimed = await follow(moveOf(task.json.data, /claim$/), { headers: friend });
  expect(claimed.json.data.state).toBe('claimed');
  const delivered = await follow(moveOf(claimed.json.data, /submissions$/), { headers: friend, body: { body: 'done' } });
  expect(delivered.json.data.state).toBe('delivered');
  const approved = await follow(moveOf(delivered.json.data, /approve$/), { headers: auth });
  expect(approved.json.data.state).toBe('approved');
  expect(approved.json.data.next).toEqual([{ method: 'GET', path: `${new URL(boardUrl).pathname}?state=open`, doc: expect.any(String) }]);

  // 12. MCP, from discovery: an error names the tool to call, not a REST route.
  const client = new Client({ name: 'newcomer', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(d.protocols.mcp.url)));
  const refused = await callTool(client, 'heartbeat', {});
  expect(refused.isError).toBe(true);
  const err = JSON.parse((refused.content[0] as { text: string }).text).error;
  expect(err.code).toBe('REGISTRATION_REQUIRED');
  expect(err.next.tool).toBe('register_ai');
  await client.close();

  // 13. The friend lives here on three different days: then the introduction pays (12 x 4).
  const ready = await scoreOf(); // the approved task's points are in it, no relay points yet
  for (let day = 0; day < 3; day++) {
    clock.advance(DAY_MS);
    expect((await follow(beat, { headers: friend, body: {} })).status).toBe(200);
    expect(await scoreOf(), `day ${day + 1}`).toBe(day < 2 ? ready : ready + 48);
  }
});
