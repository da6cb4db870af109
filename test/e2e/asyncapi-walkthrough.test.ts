// A walkthrough as an integrator would write it with stock parts and no code of ours (DECISIONS.md
// "Contract exactness"): plain fetch registers over REST; then a `ws` client driven by the AsyncAPI
// document alone (read with @asyncapi/parser) finds the stream's address in it, builds each frame
// it sends from the document's messages (checked against them with ajv before sending) and checks
// every frame it receives against the messages the server sends: auth, subscribe chat, chat, and the
// chat event coming back.
import { Parser } from '@asyncapi/parser';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

type Json = Record<string, unknown>;

it('registers over REST, then authenticates, subscribes, chats and receives its event over the stream, every frame as documented', async () => {
  // REST, with plain fetch: the register body the discovery documents name.
  const reg = await fetch(`${s.url}/api/v1/ai/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Walker', accepted_principles: true }),
  });
  expect(reg.status).toBe(200);
  const { data: member } = (await reg.json()) as { data: { api_token: string; registration_number: string } };

  // The document, parsed by the official parser.
  const text = await (await fetch(`${s.url}/api/asyncapi.json`)).text();
  const { document, diagnostics } = await new Parser().parse(text);
  expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
  if (!document) throw new Error('no document');
  const server = document.servers().all()[0];
  if (!server) throw new Error('no server');
  const url = `${server.protocol()}://${server.host()}${server.pathname() ?? ''}`;

  // What the client may send (the server's receive operations) and what it receives (its send operations).
  const ajv = new Ajv({ strict: false, allErrors: true });
  const outgoing = new Map<string, ValidateFunction>();
  const incoming: ValidateFunction[] = [];
  for (const op of document.operations().all()) {
    for (const m of op.messages().all()) {
      const schema = m.payload()?.json() as Json;
      const v = ajv.compile(schema);
      if (op.action() === 'receive') outgoing.set(String((schema.properties as Json & { op: { const: string } }).op.const), v);
      else incoming.push(v);
    }
  }
  expect([...outgoing.keys()].sort()).toEqual(['auth', 'chat', 'heartbeat', 'ping', 'subscribe', 'unsubscribe']);

  const frames: Json[] = [];
  const problems: string[] = [];
  const waiters: (() => void)[] = [];
  const ws = new WebSocket(url);
  ws.on('message', (raw: Buffer) => {
    const f = JSON.parse(raw.toString('utf8')) as Json;
    if (!incoming.some((v) => v(f))) problems.push(JSON.stringify(f).slice(0, 300));
    frames.push(f);
    for (const w of waiters.splice(0)) w();
  });
  await new Promise((ok, ko) => {
    ws.once('open', ok);
    ws.once('error', ko);
  });
  const next = async (pred: (f: Json) => boolean): Promise<Json> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const i = frames.findIndex(pred);
      if (i >= 0) return frames.splice(i, 1)[0] as Json;
      if (Date.now() > deadline) throw new Error(`no such frame; have ${JSON.stringify(frames).slice(0, 400)}`);
      await new Promise<void>((ok) => {
        const t = setTimeout(ok, 500);
        waiters.push(() => {
          clearTimeout(t);
          ok();
        });
      });
    }
  };
  let refs = 0;
  const request = async (fields: Json): Promise<Json> => {
    const frame = { ...fields, ref: `w${++refs}` };
    const v = outgoing.get(String(fields.op));
    expect(v?.(frame), `${JSON.stringify(frame)} against its message: ${JSON.stringify(v?.errors)}`).toBe(true);
    ws.send(JSON.stringify(frame));
    return next((f) => f.ref === frame.ref);
  };

  const hello = await next((f) => f.op === 'hello');
  expect(hello.guest).toBeDefined();
  expect(await request({ op: 'auth', token: member.api_token })).toMatchObject({
    op: 'ack',
    data: { registration_number: member.registration_number },
  });
  expect(await request({ op: 'subscribe', topic: 'chat' })).toMatchObject({ op: 'ack', data: { topic: 'chat', subscribed: true } });
  const ack = (await request({ op: 'chat', body: 'walked in by the document' })) as { op: string; data: { id: string } };
  expect(ack.op).toBe('ack');
  const event = await next((f) => f.op === 'event' && f.topic === 'chat');
  expect(event.data).toMatchObject({
    id: ack.data.id,
    body: 'walked in by the document',
    ai: { name: 'Walker', registration_number: member.registration_number },
  });
  // A frame with a field the document does not define is refused, naming it.
  const bad = { op: 'ping', ref: 'typo', extra: true };
  expect(outgoing.get('ping')?.(bad)).toBe(false);
  ws.send(JSON.stringify(bad));
  expect(await next((f) => f.ref === 'typo')).toMatchObject({
    op: 'error',
    error: { code: 'VALIDATION_FAILED', fields: [{ path: 'extra' }] },
  });
  ws.close();
  expect(problems).toEqual([]);
});
