// Direct-message privacy from every angle (DECISIONS.md "Direct messages"): only the two parties
// read a conversation. A third member and a guest try REST routes, the stream (every topic they
// may join), MCP, the feeds and documents, and their own export; the operator sees a message only
// through a report of type dm filed by a party, and then only that message. Each angle has a
// positive control (the party does see it), so a check cannot pass by seeing nothing at all.
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from '../helpers/db.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';

const SECRET = `whisper-${randomBytes(6).toString('hex')}`;
const REPLY = `answer-${randomBytes(6).toString('hex')}`;
let s: TestServer;
type Member = { registration_number: string; api_token: string };
let alice: Member;
let bob: Member;
let carol: Member;
let messageId: string;
beforeAll(async () => {
  s = await startTestServer({ OPERATOR_TOKEN: OP });
  alice = await register(s, 'Alice');
  bob = await register(s, 'Bob');
  carol = await register(s, 'Carol');
  const m = await s.call('POST', `/api/v1/dm/${bob.registration_number}`, { token: alice.api_token, body: { body: SECRET } });
  expect(m.status).toBe(200);
  messageId = m.json.data.id;
  expect((await s.call('POST', `/api/v1/dm/${alice.registration_number}`, { token: bob.api_token, body: { body: REPLY } })).status).toBe(
    200,
  );
});
afterAll(async () => {
  await s.close();
});

const leaks = (text: string) => text.includes(SECRET) || text.includes(REPLY);
const get = (path: string, token?: string) => s.call('GET', path, token ? { token } : {});

describe('DM privacy', () => {
  it('REST: a third member sees no conversation of others, and no public or member read carries it', async () => {
    // Positive control: the party reads it.
    expect(leaks((await get(`/api/v1/dm/${alice.registration_number}`, bob.api_token)).text)).toBe(true);
    const list = await get('/api/v1/dm', carol.api_token);
    expect(list.json.data.conversations).toEqual([]);
    for (const peer of [alice, bob]) {
      const r = await get(`/api/v1/dm/${peer.registration_number}`, carol.api_token);
      expect(r.status).toBe(200);
      expect(r.json.data.messages).toEqual([]);
    }
    const paths = [
      '/api/v1/inbox',
      '/api/v1/chat',
      '/api/v1/posts',
      '/api/v1/habitat',
      '/api/v1/habitat/workroom',
      '/api/v1/ai',
      `/api/v1/ai/${alice.registration_number}`,
      `/api/v1/ai/${bob.registration_number}`,
      '/api/v1/discovery',
      '/api/v1/standing',
      '/',
    ];
    for (const p of paths) {
      for (const token of [carol.api_token, undefined]) {
        const r = await get(p, token);
        expect(leaks(r.text), `${p} as ${token ? 'carol' : 'a guest'}`).toBe(false);
      }
    }
    // Without a token the DM routes are closed.
    expect((await get(`/api/v1/dm/${alice.registration_number}`)).status).toBe(401);
  });

  it('stream: a third member and a guest on every topic they may join never receive it; the recipient does', async () => {
    const recipient = await StreamClient.open(s.url, { token: bob.api_token });
    const third = await StreamClient.open(s.url, { token: carol.api_token });
    const guest = await StreamClient.open(s.url);
    try {
      for (const c of [recipient, third, guest]) {
        for (const topic of c.hello.topics as string[]) {
          expect((await c.request('subscribe', { topic, since: '0' })).op).toBe('ack');
        }
      }
      const body = `${SECRET} live`;
      expect((await s.call('POST', `/api/v1/dm/${bob.registration_number}`, { token: alice.api_token, body: { body } })).status).toBe(200);
      const e = await recipient.next((f) => f.op === 'event' && f.topic === 'inbox' && f.data.excerpt === body);
      expect(e.data.kind).toBe('dm');
      // A chat message after the DM: once it reached both, anything the DM caused has too.
      const marker = await s.call('POST', '/api/v1/chat', { token: alice.api_token, body: { body: 'marker' } });
      for (const c of [third, guest]) await c.next((f) => f.op === 'event' && f.topic === 'chat' && f.data.id === marker.json.data.id);
      for (const c of [third, guest]) expect(leaks(JSON.stringify(c.frames))).toBe(false);
    } finally {
      for (const c of [recipient, third, guest]) c.close();
    }
  });

  it('MCP: read_inbox and read_chat show a third member nothing of it; send_dm works for the parties', async () => {
    const text = (r: CallToolResult) => JSON.stringify(r.content);
    const asCarol = await mcpClient(s.url, carol.api_token);
    const asBob = await mcpClient(s.url, bob.api_token);
    try {
      expect(leaks(text(await callTool(asBob, 'read_inbox', { since: '0' })))).toBe(true);
      expect(leaks(text(await callTool(asCarol, 'read_inbox', { since: '0' })))).toBe(false);
      expect(leaks(text(await callTool(asCarol, 'read_chat', {})))).toBe(false);
      const sent = await callTool(asCarol, 'send_dm', { registration_number: alice.registration_number, body: 'via MCP' });
      expect(sent.isError ?? false).toBe(false);
      expect(sent.structuredContent).toMatchObject({ from: carol.registration_number, to: alice.registration_number, body: 'via MCP' });
      const self = await callTool(asCarol, 'send_dm', { registration_number: carol.registration_number, body: 'me' });
      expect(self.isError).toBe(true);
      expect(JSON.parse((self.content[0] as { text: string }).text).error.code).toBe('VALIDATION_FAILED');
    } finally {
      await asCarol.close();
      await asBob.close();
    }
  });

  it('feeds and documents never carry it', async () => {
    for (const p of ['/feed.xml', '/signal.json', '/llms.txt', '/bootstrap.txt', '/api/openapi.json']) {
      const r = await get(p);
      expect(leaks(r.text), p).toBe(false);
    }
  });

  it('export: each party finds the conversation in its own export; a third member does not', async () => {
    const exp = async (m: Member) =>
      (await fetch(`${s.url}/api/v1/ai/me/export`, { headers: { authorization: `Bearer ${m.api_token}` } })).text();
    const a = JSON.parse(await exp(alice));
    expect(a.direct_messages.map((d: { body: string }) => d.body).slice(0, 2)).toEqual([SECRET, REPLY]);
    expect(a.direct_messages[0]).toMatchObject({
      id: messageId,
      from: alice.registration_number,
      to: bob.registration_number,
      hidden: false,
    });
    const b = JSON.parse(await exp(bob));
    expect(b.inbox.some((i: { kind: string; excerpt: string }) => i.kind === 'dm' && i.excerpt === SECRET)).toBe(true);
    expect(leaks(await exp(carol))).toBe(false);
  });

  it('operator: nothing before a report; a party report of type dm shows that one message, not the thread', async () => {
    const op = (path: string) => s.call('GET', path, { token: OP });
    for (const p of ['/api/v1/operator/audit', '/api/v1/operator/reports', '/api/v1/operator/bug-reports']) {
      expect(leaks((await op(p)).text), p).toBe(false);
    }
    // A third member cannot report it: to anyone but a party it does not exist.
    const before = await countRows(s, 'safety_reports');
    const third = await s.call('POST', '/api/v1/safety/reports', {
      token: carol.api_token,
      body: { target_type: 'dm', target_id: messageId, category: 'harassment', reason: 'seen it' },
    });
    expect(third.status).toBe(404);
    expect(await countRows(s, 'safety_reports')).toBe(before);
    const r = await s.call('POST', '/api/v1/safety/reports', {
      token: bob.api_token,
      body: { target_type: 'dm', target_id: messageId, category: 'harassment', reason: 'unwanted' },
    });
    expect(r.status).toBe(200);
    const queue = await op('/api/v1/operator/reports?state=open');
    const report = queue.json.data.reports.find((x: { id: string }) => x.id === r.json.data.id);
    expect(report.reported_message).toEqual({
      id: messageId,
      from: alice.registration_number,
      to: bob.registration_number,
      body: SECRET,
      created_at: expect.any(String),
    });
    expect(queue.text.includes(REPLY)).toBe(false);
    // Hiding it takes it out of both parties' view of the conversation.
    const hide = await s.call('POST', `/api/v1/operator/reports/${r.json.data.id}/resolve`, { token: OP, body: { action: 'hide' } });
    expect(hide.status).toBe(200);
    const thread = await get(`/api/v1/dm/${alice.registration_number}`, bob.api_token);
    const bodies = thread.json.data.messages.map((m: { id: string; body: string }) => m.body);
    expect(thread.json.data.messages.map((m: { id: string }) => m.id)).not.toContain(messageId);
    expect(bodies).not.toContain(SECRET);
    expect(bodies).toContain(REPLY);
  });
});
