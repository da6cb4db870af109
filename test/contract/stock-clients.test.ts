// Stock clients, each with its own package (pinned in package.json), against one server
// (DECISIONS.md "Contract exactness"): svix's Webhook verifies an inbox webhook delivery with the
// secret the service generated, passed as it is; NDK (@nostr-dev-kit/ndk), which always dials a
// relay with a trailing slash, connects to /nostr/ and receives the signal's kinds 1 and 30078,
// signed by the service's key. No code of ours sits between the client and the service.
import NDK, { type NDKEvent, normalizeRelayUrl } from '@nostr-dev-kit/ndk';
import { verifyEvent } from 'nostr-tools/pure';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { emitNext } from '../helpers/signal.js';
import { waitFor } from '../helpers/wait.js';

// NDK dials with the platform's WebSocket; Node 20 has none of its own.
const g = globalThis as { WebSocket?: unknown };
g.WebSocket ??= WebSocket;

const clock = new TestClock();
let s: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  s = await startTestServer({ SIGNAL_INTERVAL_S: '20', INBOX_WEBHOOK_BACKOFF_MS: '5', INBOX_WEBHOOK_BACKOFF_MAX_MS: '20' }, { clock });
  receiver = await startReceiver(() => 200);
});
afterAll(async () => {
  await s?.close();
  await receiver?.close();
});

describe('svix', () => {
  it('verifies an inbox webhook delivery with the generated secret as the service gave it, and refuses a changed body', async () => {
    const owner = await register(s, 'Hooked');
    const sender = await register(s, 'Sender');
    const put = await s.call('PUT', '/api/v1/inbox/webhook', {
      token: owner.api_token,
      body: { callback_url: `${receiver.url}/inbox` },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    expect(put.status, put.text).toBe(200);
    const secret = put.json.data.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const dm = await s.call('POST', `/api/v1/dm/${owner.registration_number}`, { token: sender.api_token, body: { body: 'for svix' } });
    expect(dm.status, dm.text).toBe(200);
    await waitFor(() => receiver.requests.some((r) => r.body.includes('for svix')), 30_000, 'the inbox delivery');
    const delivery = receiver.requests.find((r) => r.body.includes('for svix'));
    if (!delivery) throw new Error('no delivery');

    const headers = delivery.headers as Record<string, string>;
    const hook = new Webhook(secret);
    expect(() => hook.verify(delivery.body, headers)).not.toThrow();
    expect(JSON.parse(delivery.body)).toMatchObject({
      type: 'inbox.item',
      registration_number: owner.registration_number,
      data: { kind: 'dm', excerpt: 'for svix' },
    });
    // The verification is real: one changed byte, or another secret, fails it.
    expect(() => hook.verify(delivery.body.replace('for svix', 'for svi!'), headers)).toThrow();
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(delivery.body, headers)).toThrow();
  });
});

describe('NDK', () => {
  it('connects to /nostr/ (its trailing slash) and receives kinds 1 and 30078, signed by the service', { timeout: 60_000 }, async () => {
    await emitNext(s, clock);
    const pubkey = schedulerOf(s.app).pubkey;
    const url = `${s.url.replace(/^http/, 'ws')}/nostr`;
    // NDK's own spelling of the relay: it adds the slash.
    expect(normalizeRelayUrl(url)).toBe(`${url}/`);
    // Only this relay: no outbox relays of its own to look up (they are on the internet).
    const ndk = new NDK({ explicitRelayUrls: [url], enableOutboxModel: false });
    await ndk.connect(10_000);
    try {
      expect([...ndk.pool.relays.keys()]).toEqual([`${url}/`]);
      const events: Set<NDKEvent> = await ndk.fetchEvents([
        { kinds: [1], authors: [pubkey] },
        { kinds: [30078], authors: [pubkey], '#d': ['commons-signal'] },
      ]);
      const kinds = new Set([...events].map((e) => e.kind));
      expect(kinds).toEqual(new Set([1, 30078]));
      for (const e of events) {
        expect(e.pubkey).toBe(pubkey);
        // Checked apart from NDK too (it samples signatures once a relay has earned its trust).
        expect(verifyEvent(JSON.parse(JSON.stringify(e.rawEvent())))).toBe(true);
      }
    } finally {
      for (const relay of ndk.pool.relays.values()) relay.disconnect();
    }
  });
});
