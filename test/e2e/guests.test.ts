// Guest numbers that last (DECISIONS.md "Identities and numbers"; src/domain/guests.ts): reads
// share the provisional number of their address and use up no number; the first write claims it
// or takes a number of its own, so two writing guests never share one; carried_over_from_guest is
// true only when something was carried over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestIssuer } from '../../src/domain/guests.js';
import { countRows } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
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
  it('a million anonymous reads from four client addresses take four numbers', async () => {
    const issuer = new GuestIssuer(s.app.ctx);
    const first = (await issuer.issue()).guestNumber;
    const addresses = ['198.51.100.1', '198.51.100.2', '2001:db8::1', '203.0.113.9'];
    const seen = new Map<string, Set<number>>(addresses.map((a) => [a, new Set()]));
    for (let i = 0; i < 1_000_000; i++) {
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

describe('writing guests never share a number', () => {
  it('concurrent first writes with one shared provisional token each get their own number', async () => {
    const read = await s.call('GET', '/api/v1/chat');
    const provisional = read.headers.get('x-commons-guest-token') as string;
    const shared = read.headers.get('x-commons-guest') as string;
    const writes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        s.call('POST', '/api/v1/chat', { headers: { 'x-commons-guest-token': provisional }, body: { body: `racer ${i}` } }),
      ),
    );
    for (const w of writes) expect(w.status).toBe(200);
    const own = writes.map((w) => w.headers.get('x-commons-guest') as string);
    expect(new Set(own).size).toBe(30);
    // Each answer names its author in the same headers that carry its own token.
    for (const w of writes) expect(w.json.data.guest).toBe(w.headers.get('x-commons-guest'));
    // Exactly one writer claimed the number the reads shared.
    expect(own.filter((n) => n === shared)).toHaveLength(1);
    const [dupes] = await s.app.ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (SELECT guest_number FROM chat_messages WHERE body LIKE 'racer %'
      GROUP BY guest_number HAVING count(*) > 1) d`;
    expect(dupes?.n).toBe(0);
    // The claimed token's reads now give a new provisional number to this address.
    const after = await s.call('GET', '/api/v1/chat');
    expect(after.headers.get('x-commons-guest')).not.toBe(shared);
  });

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
