// The stream is discoverable and described (DECISIONS.md "Real-time stream"): /api/asyncapi.json is
// a valid AsyncAPI 3.0 document (checked by the official parser), generated from the schemas the
// stream uses, every frame a real session receives matches its schema there, a plain GET of the
// stream answers 426 with the document's link, and the documents agents read first name both.
import { Parser } from '@asyncapi/parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerFrame } from '../../src/transport/ws/frames.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Frame, StreamClient } from '../helpers/stream.js';
import { checkFrame } from '../helpers/stream-gate.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('the AsyncAPI document', () => {
  it('parses as AsyncAPI 3.0 with no error and describes every op, frame, topic and close code', async () => {
    const r = await s.call('GET', '/api/asyncapi.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const { document, diagnostics } = await new Parser().parse(r.text);
    expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
    expect(document?.version()).toBe('3.0.0');
    const doc = r.json;
    expect(Object.keys(doc.channels.stream.messages).sort()).toEqual(
      ['auth', 'chat', 'heartbeat', 'ping', 'subscribe', 'unsubscribe', ...Object.keys(ServerFrame).map((k) => `server_${k}`)].sort(),
    );
    expect(doc.channels.stream.address).toBe('/api/v1/stream');
    expect(doc.servers.commons).toMatchObject({ protocol: 'ws', pathname: '/api/v1/stream', host: new URL(s.url).host });
    expect(Object.keys(doc['x-topics'])).toEqual([
      'chat',
      'presence',
      'signal',
      'replies',
      'posts',
      'treasury',
      'tasks',
      'workroom',
      'inbox',
    ]);
    expect(Object.keys(doc['x-close-codes'])).toEqual(['1001', '1008', '1009', '1013']);
    // The chat op's body limit is the stream's own validation limit.
    expect(doc.channels.stream.messages.chat.payload.properties.body.maxLength).toBeGreaterThan(0);
  });

  it('matches every frame a real session receives', async () => {
    const c = await StreamClient.open(s.url);
    // `request` and `next` take their frame off the queue: keep each one.
    const seen: Frame[] = [c.hello];
    seen.push(await c.request('subscribe', { topic: 'chat' }));
    seen.push(await c.request('chat', { body: 'described' }));
    seen.push(await c.next((f) => f.op === 'event'));
    seen.push(await c.request('ping'));
    seen.push(await c.request('subscribe', { topic: 'nowhere' }));
    seen.push(await c.request('subscribe', { topic: 'tasks' }));
    seen.push(...c.frames);
    const ops = new Set<string>();
    for (const f of seen) {
      const schema = ServerFrame[f.op as keyof typeof ServerFrame];
      expect(schema, `frame op ${f.op}`).toBeDefined();
      expect(schema.safeParse(f).success, JSON.stringify(f)).toBe(true);
      ops.add(f.op);
    }
    expect([...ops].sort()).toEqual(['ack', 'error', 'event', 'hello', 'pong']);
    c.close();
  });
});

describe('frames are exactly their messages (DECISIONS.md "Contract exactness")', () => {
  it("greets a new guest with {number, token} and no field of the issuer's own", async () => {
    // The first session of an address waits for its provisional number; later ones find it ready.
    const sessions = [await StreamClient.open(s.url), await StreamClient.open(s.url)];
    for (const c of sessions) {
      expect(Object.keys(c.hello.guest).sort()).toEqual(['number', 'token']);
      expect(c.hello.guest).toMatchObject({ number: expect.stringMatching(/^GUEST-\d{8}$/), token: expect.stringMatching(/^cmg_/) });
      expect(checkFrame(c.hello)).toEqual([]);
      c.close();
    }
  });

  it("the gate refuses a frame with a field beyond its schema, and an event whose data is not its topic's", () => {
    const hello = {
      op: 'hello',
      session: 's',
      encoding: 'json',
      topics: ['chat'],
      limits: { max_frame_bytes: 1, max_backpressure_bytes: 1 },
      guest: { number: 'GUEST-00000001', token: 'cmg_x' },
    };
    expect(checkFrame(hello)).toEqual([]);
    expect(checkFrame({ ...hello, guest: { ...hello.guest, guestNumber: 1, signedAtS: 2 } })).not.toEqual([]);
    expect(checkFrame({ op: 'event', topic: 'chat', id: '1', data: {} })).not.toEqual([]);
    expect(checkFrame({ op: 'event', topic: 'nowhere', id: '1', data: null, too_large: true })).not.toEqual([]);
    expect(checkFrame({ op: 'event', topic: 'posts', id: '1', data: null, too_large: true })).toEqual([]);
  });

  it('types event data per topic: a oneOf with one branch per topic and the too-large stand-in', async () => {
    const doc = (await s.call('GET', '/api/asyncapi.json')).json;
    const event = doc.channels.stream.messages.server_event.payload;
    expect(event.oneOf.map((b: Frame) => b.properties.topic.const ?? 'too_large')).toEqual([...Object.keys(doc['x-topics']), 'too_large']);
    const chat = event.oneOf.find((b: Frame) => b.properties.topic.const === 'chat');
    expect(chat.properties.data.required).toEqual(expect.arrayContaining(['id', 'seq', 'body', 'created_at']));
    for (const b of event.oneOf.slice(0, -1)) expect(Object.keys(b.properties.data).length, b.title).toBeGreaterThan(1);
  });

  it("documents the upgrade's refusals, 401 first, and refuses an unknown token with it", async () => {
    const doc = (await s.call('GET', '/api/asyncapi.json')).json;
    expect(Object.keys(doc['x-upgrade-refusals'])).toEqual(['401', '426', '429', '503']);
    expect(doc.channels.stream.description).toContain('401 UNAUTHORIZED');
    expect(doc.info.description).toContain('- 401 UNAUTHORIZED');
    await expect(StreamClient.open(s.url, { token: `cmn_${'C'.repeat(43)}` })).rejects.toThrow(/upgrade refused: 401/);
  });

  it('refuses an op with a field it does not define, naming the field, and writes nothing', async () => {
    const c = await StreamClient.open(s.url);
    const before = (await s.call('GET', '/api/v1/chat')).json.data.messages.length;
    const e = await c.request('chat', { body: 'typo here', bdy: 'x' });
    expect(e).toMatchObject({ op: 'error', error: { code: 'VALIDATION_FAILED', fields: [{ path: 'bdy', message: 'unknown field' }] } });
    const p = await c.request('ping', { extra: 1 });
    expect(p).toMatchObject({ op: 'error', error: { code: 'VALIDATION_FAILED', fields: [{ path: 'extra' }] } });
    const chat = (await s.call('GET', '/api/v1/chat')).json.data.messages;
    expect(chat.length).toBe(before);
    expect(chat.some((m: Frame) => m.body === 'typo here')).toBe(false);
    // The idempotency key is a field the writing ops define (DECISIONS.md "Idempotent writes").
    expect(await c.request('chat', { body: 'with a key', idempotency_key: 'k-1' })).toMatchObject({ op: 'ack' });
    const doc = (await s.call('GET', '/api/asyncapi.json')).json;
    for (const op of ['auth', 'subscribe', 'unsubscribe', 'chat', 'heartbeat', 'ping']) {
      expect(doc.channels.stream.messages[op].payload.additionalProperties, op).toBe(false);
    }
    expect(Object.keys(doc.channels.stream.messages.chat.payload.properties)).toContain('idempotency_key');
    c.close();
  });
});

describe('discovery agrees with the AsyncAPI document', () => {
  it('lists every stream topic the document has, inbox too, and names the Nostr relay with its NIP-11 document', async () => {
    const doc = (await s.call('GET', '/api/asyncapi.json')).json;
    const documented = Object.keys(doc['x-topics']);
    const branches = doc.channels.stream.messages.server_event.payload.oneOf
      .map((b: Frame) => b.properties.topic.const)
      .filter((t: unknown) => t !== undefined);
    expect(branches).toEqual(documented);
    expect(documented).toContain('inbox');
    for (const path of ['/api/v1/discovery', '/.well-known/commons-discovery.json']) {
      const r = await s.call('GET', path);
      const protocols = (r.json.data ?? r.json).protocols;
      expect(protocols.stream.topics, path).toEqual(documented);
      expect(protocols.nostr, path).toMatchObject({ url: `${s.url.replace(/^http/, 'ws')}/nostr`, nip11: `${s.url}/nostr` });
    }
    const { protocols } = (await s.call('GET', '/api/v1/discovery')).json.data;
    const nip11 = await fetch(protocols.nostr.nip11, { headers: { accept: protocols.nostr.nip11_accept } });
    expect(nip11.status).toBe(200);
    expect(nip11.headers.get('content-type')).toContain('application/nostr+json');
    expect(((await nip11.json()) as { supported_nips: number[] }).supported_nips).toEqual(protocols.nostr.supported_nips);
  });
});

describe('finding the stream', () => {
  it('answers a plain GET of the stream with 426, Upgrade and the document link', async () => {
    const r = await s.call('GET', '/api/v1/stream');
    expect(r.status).toBe(426);
    expect(r.headers.get('upgrade')).toBe('websocket');
    expect(r.json).toMatchObject({
      success: false,
      error: { code: 'UPGRADE_REQUIRED', next: { method: 'GET', path: '/api/asyncapi.json' } },
    });
  });

  it('is named by discovery, bootstrap (JSON and text) and llms.txt', async () => {
    const ws = `${s.url.replace(/^http/, 'ws')}/api/v1/stream`;
    const asyncapi = `${s.url}/api/asyncapi.json`;
    const discovery = await s.call('GET', '/api/v1/discovery');
    expect(discovery.json.data.protocols.stream).toMatchObject({ url: ws, asyncapi });
    expect(discovery.json.data.documents.asyncapi).toBe(asyncapi);
    const boot = await s.call('GET', '/api/v1/bootstrap');
    expect(boot.json.data.links).toMatchObject({ stream: ws, asyncapi });
    expect((await s.call('GET', '/bootstrap.txt')).text).toContain(`- stream: ${ws}`);
    const llms = (await s.call('GET', '/llms.txt')).text;
    expect(llms).toContain(`[Stream](${asyncapi})`);
    expect(llms).toContain(ws);
  });
});
