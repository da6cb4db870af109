// Guest numbers that last (DECISIONS.md "Identities and numbers"; src/domain/guests.ts): reads
// share the provisional number of their address and use up no number, each in a token of its own;
// a token's first write claims that number or takes one of its own, so two writing guests never
// share one and one token is one guest; carried_over_from_guest is true only when something was
// carried over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestIssuer } from '../../src/domain/guests.js';
import { countRows } from '../helpers/db.js';
import { twoNodes } from '../helpers/nodes.js';
import { startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const numberOf = (h: string | null): number => Number(String(h).slice('GUEST-'.length));

describe('reads use up no numbers', () => {
  it('a hundred thousand anonymous reads from four client addresses take four numbers', async () => {
    const issuer = new GuestIssuer(s.app.ctx);
    const first = (await issuer.issue()).guestNumber;
    const addresses = ['198.51.100.1', '198.51.100.2', '2001:db8::1', '203.0.113.9'];
    const seen = new Map<string, Set<number>>(addresses.map((a) => [a, new Set()]));
    for (let i = 0; i < 100_000; i++) {
      const address = addresses[i % addresses.length] as string;
      const g = issuer.provisional(address);
      const n = g instanceof Promise ? (await g).guestNumber : g.guestNumber;
      seen.get(address)?.add(n);
    }
    for (const a of addresses) expect(seen.get(a)?.size, a).toBe(1);
    expect(new Set(addresses.map((a) => [...(seen.get(a) as Set<number>)][0])).size).toBe(4);
    // The next number handed out comes right after the four: nothing else was consumed.
    expect((await issuer.issue()).guestNumber).toBe(first + 5);
  });

  it('anonymous reads over HTTP from one client share one guest number and write no row', async () => {
    const rows = await countRows(s, 'guests');
    const answers = await Promise.all(Array.from({ length: 200 }, () => s.call('GET', '/api/v1/constitution')));
    const numbers = new Set(answers.map((a) => a.headers.get('x-commons-guest')));
    expect(numbers.size).toBe(1);
    expect([...numbers][0]).toMatch(/^GUEST-\d{8}$/);
    expect(await countRows(s, 'guests')).toBe(rows);
  });
});

describe('the stream', () => {
  it('anonymous watchers share a number; the first chat on a socket owns one and says so in the ack', async () => {
    const watchers = await Promise.all(Array.from({ length: 20 }, () => StreamClient.open(s.url)));
    const numbers = new Set(watchers.map((w) => w.hello.guest.number));
    expect(numbers.size).toBe(1);
    const [a, b] = watchers as [StreamClient, StreamClient];
    const first = await a.request('chat', { body: 'from socket a' });
    const second = await b.request('chat', { body: 'from socket b' });
    expect(first.guest.number).toBe(a.hello.guest.number);
    expect(second.guest.number).not.toBe(first.guest.number);
    expect([first.data.guest, second.data.guest]).toEqual([first.guest.number, second.guest.number]);
    // Owned: later chats on the socket keep the number and announce nothing new.
    const again = await a.request('chat', { body: 'a again' });
    expect([again.data.guest, again.guest]).toEqual([first.guest.number, undefined]);
    // The owned token works over HTTP as that guest.
    const viaHttp = await s.call('POST', '/api/v1/chat', { token: first.guest.token, body: { body: 'a over http' } });
    expect(viaHttp.json.data.guest).toBe(first.guest.number);
    for (const w of watchers) w.close();
  });
});

describe('one guest per token', () => {
  it('a client that keeps the token a read gave it is one guest over all its writes', async () => {
    const read = await s.call('GET', '/api/v1/chat');
    const token = read.headers.get('x-commons-guest-token') as string;
    const writes = [];
    for (const i of [1, 2, 3]) writes.push(await s.call('POST', '/api/v1/chat', { token, body: { body: `kept token ${i}` } }));
    for (const w of writes) expect(w.status, w.text).toBe(200);
    const authors = writes.map((w) => w.json.data.guest);
    expect(new Set(authors).size).toBe(1);
    // The first write claims the read's number and announces it with the guest's own token.
    expect(authors[0]).toBe(read.headers.get('x-commons-guest'));
    expect(writes[0]?.headers.get('x-commons-guest')).toBe(authors[0]);
    const [rows] = await s.app.ctx.sql<{ n: number; g: number }[]>`
      SELECT count(DISTINCT guest_number)::int AS g, count(*)::int AS n FROM chat_messages WHERE body LIKE 'kept token %'`;
    expect(rows).toEqual({ n: 3, g: 1 });
    // The own token the first write announced is the same guest.
    const own = writes[0]?.headers.get('x-commons-guest-token') as string;
    const viaOwn = await s.call('POST', '/api/v1/chat', { token: own, body: { body: 'kept token 4' } });
    expect(viaOwn.json.data.guest).toBe(authors[0]);
  });

  it('two clients reading from one address and then writing are two guests', async () => {
    const [a, b] = await Promise.all([s.call('GET', '/api/v1/chat'), s.call('GET', '/api/v1/chat')]);
    const [ta, tb] = [a, b].map((r) => r.headers.get('x-commons-guest-token') as string);
    expect(ta).not.toBe(tb);
    // The displayed provisional number is the address's, shared by both readers.
    expect(a.headers.get('x-commons-guest')).toBe(b.headers.get('x-commons-guest'));
    const wa = await s.call('POST', '/api/v1/chat', { token: ta, body: { body: 'reader a' } });
    const wb = await s.call('POST', '/api/v1/chat', { token: tb, body: { body: 'reader b' } });
    expect(wa.json.data.guest).toBe(a.headers.get('x-commons-guest'));
    expect(wb.json.data.guest).not.toBe(wa.json.data.guest);
    // Each keeps its own number on its next write.
    const again = await Promise.all([ta, tb].map((token) => s.call('POST', '/api/v1/chat', { token, body: { body: 'again' } })));
    expect(again.map((r) => r.json.data.guest)).toEqual([wa.json.data.guest, wb.json.data.guest]);
    // The address's next read gets a new provisional number (the old one was claimed).
    const after = await s.call('GET', '/api/v1/chat');
    expect(after.headers.get('x-commons-guest')).not.toBe(a.headers.get('x-commons-guest'));
  });

  it('concurrent first writes with one token claim one number', async () => {
    const read = await s.call('GET', '/api/v1/chat');
    const provisional = read.headers.get('x-commons-guest-token') as string;
    const claims = await countRows(s, 'guest_claims');
    const writes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        s.call('POST', '/api/v1/chat', { headers: { 'x-commons-guest-token': provisional }, body: { body: `racer ${i}` } }),
      ),
    );
    for (const w of writes) expect(w.status).toBe(200);
    const authors = new Set(writes.map((w) => w.json.data.guest));
    expect(authors.size).toBe(1);
    const [rows] = await s.app.ctx.sql<{ g: number }[]>`
      SELECT count(DISTINCT guest_number)::int AS g FROM chat_messages WHERE body LIKE 'racer %'`;
    expect(rows?.g).toBe(1);
    expect(await countRows(s, 'guest_claims')).toBe(claims + 1);
  });
});

describe('writing guests never share a number', () => {
  it('concurrent anonymous writes without a token each get their own number', async () => {
    const writes = await Promise.all(
      Array.from({ length: 30 }, (_, i) => s.call('POST', '/api/v1/chat', { body: { body: `fresh ${i}` } })),
    );
    const own = writes.map((w) => numberOf(w.headers.get('x-commons-guest')));
    expect(new Set(own).size).toBe(30);
  });

  it('the owned token keeps its number on later writes', async () => {
    const first = await s.call('POST', '/api/v1/chat', { body: { body: 'mine' } });
    const token = first.headers.get('x-commons-guest-token') as string;
    const again = await s.call('POST', '/api/v1/chat', { token, body: { body: 'still mine' } });
    expect(again.json.data.guest).toBe(first.headers.get('x-commons-guest'));
    expect(again.headers.get('x-commons-guest')).toBeNull();
  });
});

describe('carried_over_from_guest', () => {
  it('is false when nothing was carried over: no token, or a read-only guest', async () => {
    const guestsBefore = await countRows(s, 'guests');
    const plain = await s.call('POST', '/api/v1/ai/register', { body: { name: 'Plain', accepted_principles: true } });
    expect(plain.json.data.carried_over_from_guest).toBe(false);
    // A registration is no guest's: no guest is issued with it.
    expect(plain.headers.get('x-commons-guest')).toBeNull();
    const read = await s.call('GET', '/api/v1/constitution');
    const reader = await s.call('POST', '/api/v1/ai/register', {
      token: read.headers.get('x-commons-guest-token') as string,
      body: { name: 'Reader', accepted_principles: true },
    });
    expect(reader.status).toBe(200);
    expect(reader.json.data.carried_over_from_guest).toBe(false);
    expect(await countRows(s, 'chat_messages', `author_id = ${Number(reader.json.data.registration_number.slice(3))}`)).toBe(0);
    // A number only read with is no one's: the registrations wrote no guest row.
    expect(await countRows(s, 'guests')).toBe(guestsBefore);
  });

  it('is true when the guest had written something, which moves to the new identity', async () => {
    const chat = await s.call('POST', '/api/v1/chat', { body: { body: 'guest then member' } });
    const token = chat.headers.get('x-commons-guest-token') as string;
    const r = await s.call('POST', '/api/v1/ai/register', { token, body: { name: 'Convert', accepted_principles: true } });
    expect(r.json.data.carried_over_from_guest).toBe(true);
    const id = Number(r.json.data.registration_number.slice(3));
    expect(await countRows(s, 'chat_messages', `author_id = ${id}`)).toBe(1);
  });
});

describe('a token keeps its guest across registration and limits', () => {
  it("registering with a read's token that has written carries that guest over and ends the token", async () => {
    const read = await s.call('GET', '/api/v1/chat');
    const token = read.headers.get('x-commons-guest-token') as string;
    expect((await s.call('POST', '/api/v1/chat', { token, body: { body: 'provisional then member' } })).status).toBe(200);
    const r = await s.call('POST', '/api/v1/ai/register', { token, body: { name: 'Kept', accepted_principles: true } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.carried_over_from_guest).toBe(true);
    const after = await s.call('POST', '/api/v1/chat', { token, body: { body: 'after registering' } });
    expect([after.status, after.json.error?.code]).toEqual([401, 'UNAUTHORIZED']);
    expect(await countRows(s, 'chat_messages', `body = 'after registering'`)).toBe(0);
  });

  it("the per-guest chat limit holds for a client that keeps its read's token, and its own token shares it", async () => {
    const limited = await startTestServer({ RATE_LIMITS: 'on' });
    try {
      const read = await limited.call('GET', '/api/v1/chat');
      const token = read.headers.get('x-commons-guest-token') as string;
      const statuses: number[] = [];
      let own = '';
      for (let i = 0; i < 3; i++) {
        const w = await limited.call('POST', '/api/v1/chat', { token, body: { body: `limited ${i}` } });
        own ||= w.headers.get('x-commons-guest-token') ?? '';
        statuses.push(w.status);
      }
      for (let i = 3; i < 6; i++)
        statuses.push((await limited.call('POST', '/api/v1/chat', { token: own, body: { body: `limited ${i}` } })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
      for (const t of [token, own]) {
        const refused = await limited.call('POST', '/api/v1/chat', { token: t, body: { body: 'one too many' } });
        expect([refused.status, refused.json.error.code]).toEqual([429, 'RATE_LIMITED']);
        expect(refused.headers.get('ratelimit')).toContain('"chat_guest";r=0');
      }
      expect(await countRows(limited, 'chat_messages', `body = 'one too many'`)).toBe(0);
      // Another reader at the address is another guest, with a budget of its own.
      const other = (await limited.call('GET', '/api/v1/chat')).headers.get('x-commons-guest-token') as string;
      expect((await limited.call('POST', '/api/v1/chat', { token: other, body: { body: 'someone else' } })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe.runIf(usingRealPostgres())('one guest per token across nodes', () => {
  it('writes raced on two nodes with one token claim one number, and later writes on either are that guest', async () => {
    const { a, b, close } = await twoNodes();
    try {
      const token = (await a.call('GET', '/api/v1/chat')).headers.get('x-commons-guest-token') as string;
      const writes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).call('POST', '/api/v1/chat', { token, body: { body: `two nodes ${i}` } })),
      );
      for (const w of writes) expect(w.status, w.text).toBe(200);
      expect(new Set(writes.map((w) => w.json.data.guest)).size).toBe(1);
      const later = await Promise.all([a, b].map((n) => n.call('POST', '/api/v1/chat', { token, body: { body: 'two nodes later' } })));
      expect(later.map((w) => w.json.data.guest)).toEqual([writes[0]?.json.data.guest, writes[0]?.json.data.guest]);
      expect(await countRows(a, 'guest_claims')).toBe(1);
    } finally {
      await close();
    }
  });
});
