// The stream protocol over real `ws` clients: hello, JSON and MessagePack sessions,
// auth, subscribe rules, chat both ways between REST and the socket, heartbeat, bad frames.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, StreamClient, samplePost } from '../helpers/stream.js';
import { gateFrame } from '../helpers/stream-gate.js';

let s: TestServer;
const clients: StreamClient[] = [];
const open = async (o: Parameters<typeof StreamClient.open>[1] = {}) => {
  const c = await StreamClient.open(s.url, o);
  clients.push(c);
  return c;
};
beforeAll(async () => {
  s = await startTestServer({ ...busEnv(), ...operatorEnv() });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await s.close();
});

const chatCount = async () => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chat_messages`)[0]?.n;

describe('sessions', () => {
  it('greets an anonymous JSON client as a fresh guest with its token and the topics it may join', async () => {
    const c = await open();
    expect(c.ws.protocol).toBe('');
    expect(c.hello).toMatchObject({ op: 'hello', encoding: 'json', limits: { max_frame_bytes: 65536, max_backpressure_bytes: 1048576 } });
    expect(c.hello.session).toMatch(/^[0-9a-f-]{36}$/);
    expect(c.hello.guest.number).toMatch(/^GUEST-\d{8}$/);
    expect(c.hello.guest.token).toMatch(/^cmg_/);
    expect(c.hello.topics).toEqual(['chat', 'presence', 'signal', 'replies', 'posts', 'treasury']);
    expect(await c.request('ping')).toMatchObject({ op: 'pong' });
  });

  it('speaks MessagePack in binary frames when asked for commons.msgpack.v1', async () => {
    const c = await open({ msgpack: true });
    expect(c.ws.protocol).toBe('commons.msgpack.v1');
    expect(c.hello.encoding).toBe('msgpack');
    const binary = new Promise<boolean>((ok) => c.ws.once('message', (_d, isBinary) => ok(isBinary)));
    expect(await c.request('ping')).toMatchObject({ op: 'pong' });
    expect(await binary).toBe(true);
  });

  it('knows a member from the upgrade headers, and through auth later', async () => {
    const a = await register(s, 'Streamer');
    const byHeader = await open({ token: a.api_token });
    expect(byHeader.hello.registration_number).toBe(a.registration_number);
    expect(byHeader.hello.topics).toContain('tasks');
    const later = await open();
    expect(await later.request('subscribe', { topic: 'tasks' })).toMatchObject({ op: 'error', error: { code: 'REGISTRATION_REQUIRED' } });
    expect(await later.request('auth', { token: a.api_token })).toMatchObject({
      op: 'ack',
      data: { registration_number: a.registration_number },
    });
    expect(await later.request('subscribe', { topic: 'tasks' })).toMatchObject({ op: 'ack', data: { topic: 'tasks', subscribed: true } });
    // Falling back to a guest credential leaves the member-only topic.
    expect(await later.request('auth', { token: byHeader.hello.guest?.token ?? later.hello.guest.token })).toMatchObject({ op: 'ack' });
    expect(await later.request('unsubscribe', { topic: 'tasks' })).toMatchObject({ data: { was_subscribed: false } });
  });

  it('refuses an unknown member token at upgrade (401) and in auth (UNAUTHORIZED)', async () => {
    await expect(StreamClient.open(s.url, { token: `cmn_${'B'.repeat(43)}` })).rejects.toThrow(/401/);
    const c = await open();
    expect(await c.request('auth', { token: `cmn_${'C'.repeat(43)}` })).toMatchObject({ op: 'error', error: { code: 'UNAUTHORIZED' } });
    expect(await c.request('auth', { token: 'cmg_forged' })).toMatchObject({ op: 'error', error: { code: 'UNAUTHORIZED' } });
    // The operator token is no one's identity on the stream.
    expect(await c.request('auth', { token: OPERATOR_TOKEN })).toMatchObject({ op: 'error', error: { code: 'UNAUTHORIZED' } });
  });

  it('auth with a provisional guest token claims its number for the session, and the token stays that guest', async () => {
    const reader = await open();
    const { number, token } = reader.hello.guest;
    expect(await reader.request('auth', { token })).toMatchObject({ op: 'ack', data: { guest: number } });
    // The token names one guest (DECISIONS.md "Identities and numbers"): another session with it is that guest.
    const second = await open();
    expect(await second.request('auth', { token })).toMatchObject({ op: 'ack', data: { guest: number } });
    // Another reader's token from the same address is another guest.
    const other = await open();
    const ack = await other.request('auth', { token: other.hello.guest.token });
    expect(ack).toMatchObject({ op: 'ack' });
    expect(ack.data.guest).not.toBe(number);
  });
});

describe('ops and bad frames', () => {
  it('answers bad frames with error and ref, and keeps the session', async () => {
    const c = await open();
    c.ws.send('{"op":');
    expect(await c.next((f) => f.op === 'error')).toMatchObject({ ref: null, error: { code: 'INVALID_JSON' } });
    expect(await c.request('shout')).toMatchObject({ op: 'error', error: { code: 'VALIDATION_FAILED' } });
    expect(await c.request('subscribe', { topic: 'gossip' })).toMatchObject({
      error: { code: 'VALIDATION_FAILED', fields: [{ path: 'topic' }] },
    });
    expect(await c.request('subscribe', { topic: 'chat', since: 'yesterday' })).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    c.ws.send(Buffer.from([0x92, 0xa5]), { binary: true });
    expect(await c.next((f) => f.op === 'error')).toMatchObject({ error: { code: 'INVALID_JSON' } });
    expect(await c.request('ping')).toMatchObject({ op: 'pong' });
  });

  it('refuses an oversize or empty chat body over the socket and writes nothing', async () => {
    const c = await open();
    const before = await chatCount();
    expect(await c.request('chat', { body: 'q'.repeat(2001) })).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    expect(await c.request('chat', { body: '' })).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    expect(await c.request('chat', { body: 'ok', name: 'x'.repeat(41) })).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    expect(await chatCount()).toBe(before);
  });

  it('a heartbeat over the socket is a habitat heartbeat: guests refused, a member becomes a resident', async () => {
    const g = await open();
    expect(await g.request('heartbeat', { status_note: 'here' })).toMatchObject({ error: { code: 'REGISTRATION_REQUIRED' } });
    const a = await register(s, 'Beater');
    const m = await open({ token: a.api_token });
    const first = await m.request('heartbeat', { status_note: 'on the socket' });
    expect(first).toMatchObject({ op: 'ack', data: { state: 'resident', became_resident: true, points_awarded: 3 } });
    const second = await m.request('heartbeat');
    expect(second).toMatchObject({ op: 'ack', data: { became_resident: false, points_awarded: 0 } });
    const me = await s.call('GET', '/api/v1/ai/me', { token: a.api_token });
    expect(me.json.data.state).toBe('resident');
    expect(me.json.data.activity_score).toBe(3);
    expect(await m.request('heartbeat', { status_note: 'n'.repeat(141) })).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
  });

  it('closes a connection that sends a frame over 64 KiB (1009) and leaves others alone', async () => {
    const big = await open();
    const other = await open();
    big.ws.send('x'.repeat(64 * 1024 + 1));
    const { code } = await big.closed;
    expect(code).toBe(1009);
    expect(await other.request('ping')).toMatchObject({ op: 'pong' });
  });
});

describe('chat both ways', () => {
  it('shows a REST post on JSON and MessagePack sockets, and a socket post over REST', async () => {
    const json = await open();
    const mp = await open({ msgpack: true });
    expect(await json.request('subscribe', { topic: 'chat' })).toMatchObject({ op: 'ack', data: { topic: 'chat', subscribed: true } });
    expect(await mp.request('subscribe', { topic: 'chat' })).toMatchObject({ op: 'ack' });
    const posted = await s.call('POST', '/api/v1/chat', { body: { body: 'rest to socket', name: 'Poller' } });
    const { content_trust: _, ...record } = posted.json.data;
    for (const c of [json, mp]) {
      const e = await c.next((f) => f.op === 'event' && f.data?.id === record.id);
      expect(e).toEqual({ op: 'event', topic: 'chat', id: String(record.seq), data: record });
    }
    const ack = await mp.request('chat', { body: 'socket to rest', name: 'Holder' });
    expect(ack).toMatchObject({ op: 'ack', data: { body: 'socket to rest', guest_label: 'Holder', guest: mp.hello.guest.number } });
    const seen = await json.next((f) => f.op === 'event' && f.data?.id === ack.data.id);
    expect(seen.data.body).toBe('socket to rest');
    const list = await s.call('GET', '/api/v1/chat?limit=5');
    expect(list.json.data.messages.at(-1)).toMatchObject({ id: ack.data.id, body: 'socket to rest', guest_label: 'Holder' });
  });

  it('encodes each broadcast once per encoding, however many subscribers', async () => {
    const subs = await Promise.all(Array.from({ length: 20 }, (_, i) => open({ msgpack: i % 2 === 0 })));
    for (const c of subs) await c.request('subscribe', { topic: 'posts' });
    const before = s.app.stream.fanout.published;
    await s.app.ctx.bus.publish({ topic: 'posts', id: '1', data: samplePost({ title: 'one' }) });
    for (const c of subs) expect(await c.next((f) => f.op === 'event' && f.topic === 'posts')).toMatchObject({ data: { title: 'one' } });
    expect(s.app.stream.fanout.published - before).toBe(2);
  });

  it('stands in for an event larger than a frame with too_large', async () => {
    const c = await open();
    await c.request('subscribe', { topic: 'posts' });
    await s.app.ctx.bus.publish({ topic: 'posts', id: '2', data: samplePost({ body: 'b'.repeat(70_000) }) });
    expect(await c.next((f) => f.op === 'event' && f.id === '2')).toEqual({
      op: 'event',
      topic: 'posts',
      id: '2',
      data: null,
      too_large: true,
    });
  });

  it('stops delivering after unsubscribe', async () => {
    const c = await open();
    await c.request('subscribe', { topic: 'signal' });
    expect(await c.request('unsubscribe', { topic: 'signal' })).toMatchObject({ data: { was_subscribed: true } });
    await s.app.ctx.bus.publish({ topic: 'signal', id: '9', data: {} });
    expect(await c.request('ping')).toMatchObject({ op: 'pong' });
    expect(c.events('signal')).toEqual([]);
  });
});

it('is reachable with a plain ws client that offers the JSON subprotocol', async () => {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/api/v1/stream`, ['commons.json.v1']);
  const hello = await new Promise<string>((ok) => ws.once('message', (d) => ok(d.toString())));
  expect(ws.protocol).toBe('commons.json.v1');
  gateFrame(JSON.parse(hello));
  expect(JSON.parse(hello).op).toBe('hello');
  ws.close();
});
