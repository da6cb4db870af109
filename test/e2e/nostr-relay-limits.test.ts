// The relay at /nostr is metered like the stream (docs/security.md "A flood of connections"): an
// address holds at most NOSTR_RELAY_CONNECTIONS_PER_ADDRESS open connections (the next is told
// `NOTICE "rate-limited: ..."` and closed 1008), and each connection spends a REQ budget
// (NOSTR_RELAY_REQ_BURST at once, NOSTR_RELAY_REQS_PER_MINUTE after): a REQ over it answers
// `CLOSED <sub> "rate-limited: ..."` and queries nothing, while the connection stays open.
// Real `ws` clients speaking NIP-01; both backends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Msg = unknown[];

/** A NIP-01 client over `ws`: messages queued in order, the close code. */
class NostrClient {
  readonly messages: Msg[] = [];
  private wake: () => void = () => {};
  readonly closed: Promise<number>;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d: Buffer) => {
      this.messages.push(JSON.parse(d.toString('utf8')) as Msg);
      this.wake();
    });
    this.closed = new Promise((ok) => ws.on('close', (code) => ok(code)));
  }

  static async open(s: TestServer, ip: string): Promise<NostrClient> {
    const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}/nostr`, { headers: { 'x-forwarded-for': ip } });
    const c = new NostrClient(ws);
    await new Promise<void>((ok, ko) => {
      ws.once('open', () => ok());
      ws.once('error', ko);
    });
    return c;
  }

  send(...msg: unknown[]): void {
    this.ws.send(JSON.stringify(msg));
  }

  /** The first queued message matching `pred`, removed from the queue (waits up to 5 s). */
  async next(pred: (m: Msg) => boolean): Promise<Msg> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const i = this.messages.findIndex(pred);
      if (i >= 0) return this.messages.splice(i, 1)[0] as Msg;
      if (Date.now() > deadline) throw new Error(`no matching message; queued: ${JSON.stringify(this.messages).slice(0, 300)}`);
      await new Promise<void>((ok) => {
        const t = setTimeout(ok, deadline - Date.now());
        this.wake = () => {
          clearTimeout(t);
          ok();
        };
      });
    }
  }

  /** Sends a REQ and returns what ends it: its EOSE or its CLOSED. */
  req(subId: string, ...filters: object[]): Promise<Msg> {
    this.send('REQ', subId, ...filters);
    return this.next((m) => (m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === subId);
  }
}

const FILTERS = [
  { kinds: [1], limit: 500 },
  { kinds: [30078], limit: 500 },
  { '#t': ['commons'], limit: 500 },
];

describe('relay limits (RATE_LIMITS on)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      RATE_LIMITS: 'on',
      TRUST_PROXY: '1',
      NOSTR_RELAY_CONNECTIONS_PER_ADDRESS: '3',
      NOSTR_RELAY_REQ_BURST: '5',
      // One a minute: no REQ is refilled while the test sends its burst.
      NOSTR_RELAY_REQS_PER_MINUTE: '1',
    });
  });
  afterAll(async () => {
    await s.close();
  });

  it('an address holds 3 connections; the 4th hears NOTICE rate-limited and is closed 1008; others and freed slots connect', async () => {
    const ip = '192.0.2.41';
    const held = [await NostrClient.open(s, ip), await NostrClient.open(s, ip), await NostrClient.open(s, ip)];
    for (const [i, c] of held.entries()) expect(await c.req(`h${i}`, { kinds: [1] })).toEqual(['EOSE', `h${i}`]);
    const fourth = await NostrClient.open(s, ip);
    expect(await fourth.next((m) => m[0] === 'NOTICE')).toEqual(['NOTICE', 'rate-limited: at most 3 open connections per address']);
    expect(await fourth.closed).toBe(1008);
    // Another address is not affected.
    const elsewhere = await NostrClient.open(s, '192.0.2.42');
    expect(await elsewhere.req('e', { kinds: [1] })).toEqual(['EOSE', 'e']);
    // A closed connection frees its slot.
    held[0]?.ws.close();
    await held[0]?.closed;
    const again = await NostrClient.open(s, ip);
    expect(await again.req('again', { kinds: [1] })).toEqual(['EOSE', 'again']);
    for (const c of [...held.slice(1), elsewhere, again]) c.ws.close();
  });

  it('a connection runs 5 REQs at once; the next answer CLOSED rate-limited, and the connection stays open', async () => {
    const c = await NostrClient.open(s, '192.0.2.43');
    const ends: Msg[] = [];
    for (let i = 0; i < 8; i++) ends.push(await c.req(`q${i}`, ...FILTERS));
    expect(ends.slice(0, 5)).toEqual([0, 1, 2, 3, 4].map((i) => ['EOSE', `q${i}`]));
    for (const [i, m] of ends.slice(5).entries()) {
      expect(m[0]).toBe('CLOSED');
      expect(m[1]).toBe(`q${i + 5}`);
      expect(m[2]).toMatch(/^rate-limited: at most 5 REQs at once, then 1 a minute; wait \d+ s$/);
    }
    // Not a refusal of the connection: CLOSE and EVENT are still answered.
    c.send('EVENT', { id: 'x' });
    expect(await c.next((m) => m[0] === 'OK')).toEqual(['OK', 'x', false, 'blocked: read-only']);
    c.ws.close();
  });

  it('a message is decoded as every door decodes: nesting past 32 or a __proto__ key is a NOTICE naming why, and the connection stays', async () => {
    const c = await NostrClient.open(s, '192.0.2.44');
    c.ws.send(`["REQ","deep",{"kinds":[1],"x":${'['.repeat(40)}${']'.repeat(40)}}]`);
    expect(await c.next((m) => m[0] === 'NOTICE')).toEqual(['NOTICE', 'invalid: message: nesting deeper than 32 levels']);
    c.ws.send('["REQ","proto",{"kinds":[1],"__proto__":{"x":1}}]');
    const proto = await c.next((m) => m[0] === 'NOTICE');
    expect(proto[1]).toMatch(/^invalid: message is not valid JSON/);
    expect(await c.req('fine', { kinds: [1] })).toEqual(['EOSE', 'fine']);
    c.ws.close();
  });
});
