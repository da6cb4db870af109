// Direct messages over real HTTP (DECISIONS.md "Direct messages"): sending, the recipient's `dm`
// inbox item, conversations and their unread counts, paging and marking read, blocking, the
// first-contact limit, and refusals that write nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, idOf } from '../helpers/db.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
type Member = { registration_number: string; api_token: string };
let alice: Member;
let bob: Member;
beforeAll(async () => {
  s = await startTestServer();
  alice = await register(s, 'Alice');
  bob = await register(s, 'Bob');
});
afterAll(async () => {
  await s.close();
});

const send = (from: Member, to: string, body: unknown) => s.call('POST', `/api/v1/dm/${to}`, { token: from.api_token, body: { body } });
const writes = async () => [await countRows(s, 'dm_messages'), await countRows(s, 'dm_conversations'), await countRows(s, 'inbox_items')];

describe('direct messages', () => {
  it('sends a message; the recipient gets a dm inbox item; both see the conversation', async () => {
    const r = await send(alice, bob.registration_number, 'Hello Bob, a private word.');
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      from: alice.registration_number,
      to: bob.registration_number,
      body: 'Hello Bob, a private word.',
      created_at: expect.stringMatching(/Z$/),
      content_trust: 'untrusted_user_content',
    });
    const inbox = await s.call('GET', '/api/v1/inbox', { token: bob.api_token });
    expect(inbox.json.data.items).toEqual([
      {
        id: '1',
        kind: 'dm',
        created_at: expect.any(String),
        actor: alice.registration_number,
        subject: { type: 'dm', id: r.json.data.id, url: `${s.url}/api/v1/dm/${alice.registration_number}` },
        excerpt: 'Hello Bob, a private word.',
        read: false,
      },
    ]);
    expect(await countRows(s, 'inbox_items', `identity_id = ${idOf(alice.registration_number)}`)).toBe(0);

    const bobList = await s.call('GET', '/api/v1/dm', { token: bob.api_token });
    expect(bobList.status).toBe(200);
    expect(bobList.json.data.conversations).toEqual([
      {
        peer: { registration_number: alice.registration_number, name: 'Alice' },
        last_message: expect.objectContaining({ id: r.json.data.id }),
        unread_count: 1,
      },
    ]);
    const aliceList = await s.call('GET', '/api/v1/dm', { token: alice.api_token });
    expect(aliceList.json.data.conversations).toMatchObject([{ peer: { registration_number: bob.registration_number }, unread_count: 0 }]);
  });

  it('pages a conversation newest page first, chronological within it, and reading marks it read', async () => {
    for (let i = 1; i <= 4; i++) await send(bob, alice.registration_number, `reply ${i}`);
    const l0 = await s.call('GET', '/api/v1/dm', { token: alice.api_token });
    expect(l0.json.data.conversations[0].unread_count).toBe(4);
    const p1 = await s.call('GET', `/api/v1/dm/${bob.registration_number}?limit=3`, { token: alice.api_token });
    expect(p1.status).toBe(200);
    expect(p1.json.data.peer).toEqual({ registration_number: bob.registration_number, name: 'Bob' });
    expect(p1.json.data.messages.map((m: { body: string }) => m.body)).toEqual(['reply 2', 'reply 3', 'reply 4']);
    const p2 = await s.call('GET', `/api/v1/dm/${bob.registration_number}?limit=3&before=${p1.json.data.next_cursor}`, {
      token: alice.api_token,
    });
    expect(p2.json.data.messages.map((m: { body: string }) => m.body)).toEqual(['Hello Bob, a private word.', 'reply 1']);
    expect(p2.json.data.next_cursor).toBeNull();
    const l1 = await s.call('GET', '/api/v1/dm', { token: alice.api_token });
    expect(l1.json.data.conversations[0]).toMatchObject({
      unread_count: 0,
      last_message: { body: 'reply 4', from: bob.registration_number },
    });
  });

  it('refuses oneself (400), an unknown number (404), a malformed number or body (400), and writes nothing', async () => {
    const before = await writes();
    const self = await send(alice, alice.registration_number, 'me');
    expect(self.status).toBe(400);
    expect(self.json.error.code).toBe('VALIDATION_FAILED');
    const unknown = await send(alice, 'AI-99999999', 'anyone?');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('NOT_FOUND');
    for (const [to, body] of [
      ['bob', 'x'],
      [bob.registration_number, ''],
      [bob.registration_number, 'x'.repeat(2001)],
      [bob.registration_number, 42],
    ] as const) {
      const r = await send(alice, to, body);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
    }
    const guest = await s.call('POST', `/api/v1/dm/${bob.registration_number}`, { body: { body: 'hi' } });
    expect(guest.status).toBe(401);
    expect(guest.json.error.code).toBe('REGISTRATION_REQUIRED');
    expect(await writes()).toEqual(before);
    expect((await s.call('GET', '/api/v1/dm/AI-99999999', { token: alice.api_token })).status).toBe(404);
    expect((await s.call('GET', `/api/v1/dm/${alice.registration_number}`, { token: alice.api_token })).status).toBe(400);
  });

  it('a blocked sender gets 403 BLOCKED and creates nothing; unblocking lets it write again', async () => {
    const b = await s.call('POST', `/api/v1/dm/${alice.registration_number}/block`, { token: bob.api_token });
    expect(b.status).toBe(200);
    expect(b.json.data).toEqual({ registration_number: alice.registration_number, blocked: true });
    const before = await writes();
    const r = await send(alice, bob.registration_number, 'still there?');
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('BLOCKED');
    expect(r.json.error.next).toEqual({ method: 'GET', path: '/api/v1/dm', doc: expect.any(String) });
    expect(await writes()).toEqual(before);
    // The blocker can still write to the one it blocked.
    expect((await send(bob, alice.registration_number, 'I blocked you')).status).toBe(200);
    const u = await s.call('DELETE', `/api/v1/dm/${alice.registration_number}/block`, { token: bob.api_token });
    expect(u.json.data).toEqual({ registration_number: alice.registration_number, blocked: false });
    expect((await send(alice, bob.registration_number, 'thanks')).status).toBe(200);
    expect((await s.call('POST', '/api/v1/dm/AI-99999999/block', { token: bob.api_token })).status).toBe(404);
    expect((await s.call('POST', `/api/v1/dm/${bob.registration_number}/block`, { token: bob.api_token })).status).toBe(400);
  });

  it('limits first contact to 20 new conversations per 24 h (429 + Retry-After); existing ones stay open', async () => {
    const sender = await register(s, 'Sender');
    const peers: Member[] = [];
    for (let i = 0; i < 21; i++) peers.push(await register(s, `Peer ${i}`));
    for (let i = 0; i < 20; i++) expect((await send(sender, (peers[i] as Member).registration_number, `hi ${i}`)).status).toBe(200);
    const before = await writes();
    const r = await send(sender, (peers[20] as Member).registration_number, 'one more');
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe('RATE_LIMITED');
    const wait = Number(r.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(24 * 3600 - 120);
    expect(wait).toBeLessThanOrEqual(24 * 3600);
    expect(r.json.error.retry_after_s).toBe(wait);
    expect(await writes()).toEqual(before);
    // A conversation already open is not a first contact; a reply from a peer is not one either.
    expect((await send(sender, (peers[0] as Member).registration_number, 'again')).status).toBe(200);
    expect((await send(peers[20] as Member, sender.registration_number, 'I write first')).status).toBe(200);
    expect((await send(sender, (peers[20] as Member).registration_number, 'now we talk')).status).toBe(200);
  });
});
