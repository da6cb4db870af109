// Idempotency-Key on every write (DECISIONS.md "Idempotent writes"): a repeat with the same key and
// body gets the first answer again (status and data, `Idempotent-Replayed: true`) and writes
// nothing more; another body answers 422 IDEMPOTENCY_MISMATCH and writes nothing; a malformed key
// is 400 VALIDATION_FAILED; keys are scoped to the caller; a task move retried after its answer
// was lost gets the stored 200, not 409 INVALID_STATE; a refusal is kept as the answer too; the
// key outlives a restart and lapses after 24 h (and the reaper forgets it); stream ops and MCP
// tools take the same key.
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapKeys } from '../../src/domain/idempotency.js';
import { SharedStore } from '../helpers/nodes.js';
import { type Answer, TestClock, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';
import { type Member, member, move, post, submit } from '../helpers/tasks.js';
import { waitFor } from '../helpers/wait.js';

const clock = new TestClock();
const shared = new SharedStore({}, { clock });
let s: TestServer;
let alice: Member;
let bob: Member;

beforeAll(async () => {
  s = await shared.start();
  alice = await member(s, 'Alice');
  bob = await member(s, 'Bob');
});
afterAll(async () => {
  await shared.close();
});

const keyed = (key: string, who: Member | null, method: string, path: string, body?: unknown): Promise<Answer> =>
  s.call(method, path, {
    headers: { 'idempotency-key': key },
    ...(who ? { token: who.token } : {}),
    ...(body === undefined ? {} : { body }),
  });

const count = async (table: string, where = 'true', args: unknown[] = []): Promise<number> =>
  ((await s.app.ctx.sql.unsafe(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, args as never[]))[0] as unknown as { n: number })
    .n;

describe('REST', () => {
  it('the same key and body: one message, the first answer again with Idempotent-Replayed', async () => {
    const before = await count('chat_messages');
    const first = await keyed('chat-1', alice, 'POST', '/api/v1/chat', { body: 'once only' });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await keyed('chat-1', alice, 'POST', '/api/v1/chat', { body: 'once only' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.data).toEqual(first.json.data);
    expect(await count('chat_messages')).toBe(before + 1);
    // Without a key nothing changes: two posts are two messages.
    for (let i = 0; i < 2; i++)
      expect((await s.call('POST', '/api/v1/chat', { token: alice.token, body: { body: 'twice' } })).status).toBe(200);
    expect(await count('chat_messages')).toBe(before + 3);
  });

  it('the same key with another body: 422 IDEMPOTENCY_MISMATCH, nothing written', async () => {
    const before = await count('chat_messages');
    expect((await keyed('chat-2', alice, 'POST', '/api/v1/chat', { body: 'first' })).status).toBe(200);
    const other = await keyed('chat-2', alice, 'POST', '/api/v1/chat', { body: 'second' });
    expect(other.status).toBe(422);
    expect(other.json.error.code).toBe('IDEMPOTENCY_MISMATCH');
    const elsewhere = await keyed('chat-2', alice, 'POST', '/api/v1/posts', { post_type: 'discussion', title: 't', body: 'b' });
    expect(elsewhere.status).toBe(422);
    expect(await count('chat_messages')).toBe(before + 1);
    expect(await count('posts', 'author_id = $1', [alice.id])).toBe(0);
  });

  it('a malformed key: 400 VALIDATION_FAILED naming the header, nothing written', async () => {
    const before = await count('chat_messages');
    for (const bad of ['with space', 'x'.repeat(256), 'é', '']) {
      const r = await keyed(bad, alice, 'POST', '/api/v1/chat', { body: 'never' });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(r.json.error.fields[0].path).toBe('Idempotency-Key');
    }
    expect((await keyed('x'.repeat(255), alice, 'POST', '/api/v1/chat', { body: 'the longest key' })).status).toBe(200);
    expect(await count('chat_messages')).toBe(before + 1);
  });

  it("keys are the caller's own: another member's same key is another request", async () => {
    const a = await keyed('mine', alice, 'POST', '/api/v1/memory', { key: 'k.one', value: 1 });
    const b = await keyed('mine', bob, 'POST', '/api/v1/memory', { key: 'k.one', value: 2 });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(await count('memory', "key = 'k.one'")).toBe(2);
  });

  it('an anonymous caller is scoped by its address: a retried anonymous post is one message', async () => {
    const before = await count('chat_messages');
    // At least 22 characters without a credential (idempotency-at-rest.test.ts has the refusals).
    const first = await keyed('anon-1-0b6c2a4e-5f1d-4c3a', null, 'POST', '/api/v1/chat', { body: 'hello from nowhere' });
    const again = await keyed('anon-1-0b6c2a4e-5f1d-4c3a', null, 'POST', '/api/v1/chat', { body: 'hello from nowhere' });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.data.id).toBe(first.json.data.id);
    expect(await count('chat_messages')).toBe(before + 1);
  });

  it('task moves retried: the stored 200 again (not 409 INVALID_STATE), credits moved once', async () => {
    const id = await post(s, alice, 7);
    const claim = () => keyed(`claim-${id}`, bob, 'POST', `/api/v1/habitat/tasks/${id}/claim`);
    const c1 = await claim();
    const c2 = await claim();
    expect([c1.status, c2.status]).toEqual([200, 200]);
    expect(c2.json.data).toEqual(c1.json.data);
    expect((await submit(s, bob, id)).status).toBe(200);
    const approve = () => keyed(`approve-${id}`, alice, 'POST', `/api/v1/habitat/tasks/${id}/approve`);
    const a1 = await approve();
    const a2 = await approve();
    expect([a1.status, a2.status]).toEqual([200, 200]);
    expect(a2.headers.get('idempotent-replayed')).toBe('true');
    // Without the key, the repeat is the move it is: refused.
    expect((await move(s, alice, id, 'approve')).status).toBe(409);
    expect(await count('task_events', 'task_id = $1', [id])).toBe(4);
  });

  it('a refusal is the kept answer: the same key gets the same 403 even once the move would pass', async () => {
    const id = await post(s, alice, 3);
    const own = await keyed('own-claim', alice, 'POST', `/api/v1/habitat/tasks/${id}/claim`);
    expect(own.status).toBe(403);
    const again = await keyed('own-claim', alice, 'POST', `/api/v1/habitat/tasks/${id}/claim`);
    expect(again.status).toBe(403);
    expect(again.json.error.code).toBe('FORBIDDEN');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await count('task_events', 'task_id = $1', [id])).toBe(1);
  });

  it('a keyed decline of the principles is its answer: the repeat replays it and is not counted again', async () => {
    const declines = async () =>
      Number((await s.app.ctx.sql<{ value: string }[]>`SELECT value::text FROM counters WHERE name = 'declines_total'`)[0]?.value ?? 0);
    const before = await declines();
    const key = 'decline-0123456789abcdef-0001';
    const first = await keyed(key, null, 'POST', '/api/v1/ai/register', { name: 'Not Today', accepted_principles: false });
    expect(first.json.error.code).toBe('PRINCIPLES_NOT_ACCEPTED');
    const again = await keyed(key, null, 'POST', '/api/v1/ai/register', { name: 'Not Today', accepted_principles: false });
    expect(again.json.error.code).toBe('PRINCIPLES_NOT_ACCEPTED');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await declines()).toBe(before + 1);
    // A refusal of its shape (not a boolean) is not kept: fixed, the same key is a new request.
    const shaped = 'decline-0123456789abcdef-0002';
    expect((await keyed(shaped, null, 'POST', '/api/v1/ai/register', { name: 'Maybe', accepted_principles: 'yes' })).status).toBe(400);
    const fixed = await keyed(shaped, null, 'POST', '/api/v1/ai/register', { name: 'Maybe', accepted_principles: true });
    expect(fixed.status, fixed.text).toBe(200);
  });

  it('an answer lost with the connection: the retry with the key gets it, one row', async () => {
    const before = await count('chat_messages');
    const body = JSON.stringify({ body: 'the answer to this was lost' });
    const port = Number(new URL(s.url).port);
    const request =
      `POST /api/v1/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${alice.token}\r\nIdempotency-Key: lost-1\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // The request is sent; once its message is stored the client drops the connection unread.
    const sock = connect(port, '127.0.0.1', () => sock.write(request));
    sock.on('error', () => {});
    await waitFor(async () => (await count('chat_messages')) === before + 1, 10_000, 'the first request stored');
    sock.destroy();
    // The retry may meet the first still finishing (409 IDEMPOTENCY_IN_FLIGHT, Retry-After 1).
    let last: Answer | undefined;
    await expect
      .poll(
        async () => {
          last = await keyed('lost-1', alice, 'POST', '/api/v1/chat', { body: 'the answer to this was lost' });
          if (last.status === 409) expect(last.headers.get('retry-after')).toBe('1');
          return last.status;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe(200);
    expect(last?.headers.get('idempotent-replayed')).toBe('true');
    expect(await count('chat_messages')).toBe(before + 1);
  });
});

describe('every kind of write takes a key', () => {
  it('each write sent twice with its key: 200, then the same answer replayed', async () => {
    const p = await keyed('k-post', alice, 'POST', '/api/v1/posts', { post_type: 'discussion', title: 't', body: 'b' });
    const q = await keyed('k-question', alice, 'POST', '/api/v1/habitat/questions', { body: 'why?' });
    const pr = await keyed('k-proposal', alice, 'POST', '/api/v1/habitat/proposals', { title: 't', body: 'b' });
    const task = await post(s, alice, 2);
    const WRITES: [string, string, string, Member | null, unknown?][] = [
      ['heartbeat', 'POST', '/api/v1/habitat/heartbeat', bob, { status_note: 'here' }],
      ['direct message', 'POST', `/api/v1/dm/${alice.number}`, bob, { body: 'hi' }],
      ['comment', 'POST', `/api/v1/posts/${p.json.data.id}/comments`, bob, { body: 'c' }],
      ['answer', 'POST', `/api/v1/habitat/questions/${q.json.data.id}/answers`, bob, { body: 'because' }],
      ['vote', 'POST', `/api/v1/habitat/proposals/${pr.json.data.id}/votes`, bob, { choice: 'yes' }],
      ['reply', 'POST', '/api/v1/replies', null, { intent: 'question', message: 'm' }],
      ['memory put', 'POST', '/api/v1/memory/k.two', bob, { value: [1, 2] }],
      ['memory delete', 'DELETE', '/api/v1/memory/k.two', bob],
      ['task cancel', 'POST', `/api/v1/habitat/tasks/${task}/cancel`, alice],
      ['block', 'POST', `/api/v1/dm/${alice.number}/block`, bob],
      ['unblock', 'DELETE', `/api/v1/dm/${alice.number}/block`, bob],
      ['inbox read', 'POST', '/api/v1/inbox/read', alice, { up_to: '1' }],
      ['register', 'POST', '/api/v1/ai/register', null, { name: 'Keyed', accepted_principles: true }],
    ];
    for (const x of [p, q, pr]) expect(x.status, x.text).toBe(200);
    for (const [name, method, path, who, body] of WRITES) {
      // Long enough for a write without a credential and for one whose answer carries a token.
      const key = `k-${name.replaceAll(' ', '-')}-7c1e9f0a-2b3d-4e5f`;
      const first = await keyed(key, who, method, path, body);
      expect(first.status, `${name}: ${first.text}`).toBe(200);
      const again = await keyed(key, who, method, path, body);
      expect(again.status, name).toBe(200);
      expect(again.headers.get('idempotent-replayed'), name).toBe('true');
      expect(again.json.data, name).toEqual(first.json.data);
    }
    expect(await count('identities', "name = 'Keyed'")).toBe(1);
    expect(await count('dm_messages', "body = 'hi'")).toBe(1);
  });
});

describe('stream ops and MCP tools take the same key', () => {
  it('a stream chat op with idempotency_key: the repeat is acked with the first message, one row', async () => {
    const before = await count('chat_messages');
    const ws = await StreamClient.open(s.url, { token: alice.token });
    const a = await ws.request('chat', { body: 'over the stream', idempotency_key: 'ws-1' });
    const b = await ws.request('chat', { body: 'over the stream', idempotency_key: 'ws-1' });
    expect(a.op, JSON.stringify(a)).toBe('ack');
    expect(b.op).toBe('ack');
    expect(b.data).toEqual(a.data);
    const c = await ws.request('chat', { body: 'another body', idempotency_key: 'ws-1' });
    expect(c.op).toBe('error');
    expect(c.error.code).toBe('IDEMPOTENCY_MISMATCH');
    // The same key over REST with the same body is the same request.
    const rest = await keyed('ws-1', alice, 'POST', '/api/v1/chat', { body: 'over the stream' });
    expect(rest.headers.get('idempotent-replayed')).toBe('true');
    expect(await count('chat_messages')).toBe(before + 1);
    ws.close();
  });

  it('an MCP tool call with idempotency_key runs once', async () => {
    const before = await count('chat_messages');
    const client = new Client({ name: 'idem', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${alice.token}` } } }),
    );
    const args = { body: 'from a tool', idempotency_key: 'mcp-1' };
    const one = await client.callTool({ name: 'post_chat', arguments: args });
    const two = await client.callTool({ name: 'post_chat', arguments: args });
    expect(one.isError ?? false).toBe(false);
    expect(two.structuredContent ?? two.content).toEqual(one.structuredContent ?? one.content);
    const bad = await client.callTool({ name: 'post_chat', arguments: { ...args, body: 'changed' } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('IDEMPOTENCY_MISMATCH');
    expect(await count('chat_messages')).toBe(before + 1);
    await client.close();
  });
});

describe('lifetime', () => {
  it('a key outlives a restart; after 24 h it lapses (the write runs again) and the reaper forgets it', async () => {
    const first = await keyed('long-1', alice, 'POST', '/api/v1/memory', { key: 'k.life', value: 'v' });
    expect(first.status).toBe(200);
    s = await shared.restart(s);
    const again = await keyed('long-1', alice, 'POST', '/api/v1/memory', { key: 'k.life', value: 'v' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.data).toEqual(first.json.data);
    // Time travel through the service's own clock: a day and a second later.
    clock.advance(24 * 3600 * 1000 + 1000);
    const later = await keyed('long-1', alice, 'POST', '/api/v1/memory', { key: 'k.life', value: 'v' });
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    const olderKey = await keyed('old-2', alice, 'POST', '/api/v1/chat', { body: 'to be reaped' });
    expect(olderKey.status).toBe(200);
    // Kept only as their SHA-256 (docs/security.md "A copy of the database").
    const stored = "key_hash IN (sha256('long-1'::bytea), sha256('old-2'::bytea))";
    expect(await count('idempotency_keys', stored)).toBe(2);
    clock.advance(24 * 3600 * 1000 + 1000);
    const reaped = await reapKeys(s.app.ctx);
    expect(reaped).toBeGreaterThanOrEqual(2);
    expect(await count('idempotency_keys', stored)).toBe(0);
  });
});
