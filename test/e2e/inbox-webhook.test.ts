// The inbox webhook (DECISIONS.md "Inbox"): PUT/GET/DELETE, the SSRF rules of push, items POSTed
// signed (checked with the `standardwebhooks` package), in id order; a receiver that fails and
// then recovers gets every item once, in order; 50 failed tries in a row disable the webhook and
// write a `webhook_disabled` item.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, idOf } from '../helpers/db.js';
import { type Received, type Receiver, startReceiver } from '../helpers/receiver.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = 'an inbox secret of some length';
let s: TestServer;
const receivers: Receiver[] = [];
type Member = { registration_number: string; api_token: string };
let alice: Member;
beforeAll(async () => {
  s = await startTestServer({ INBOX_WEBHOOK_BACKOFF_MS: '5', INBOX_WEBHOOK_BACKOFF_MAX_MS: '20', INBOX_WEBHOOK_TIMEOUT_MS: '2000' });
  alice = await register(s, 'Alice');
});
afterAll(async () => {
  await s.close();
  for (const r of receivers) await r.close();
});

const receiver = async (respond: Receiver['respond']) => {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
};
const put = (m: Member, url: string, secret = SECRET) =>
  s.call('PUT', '/api/v1/inbox/webhook', { token: m.api_token, body: { callback_url: url, secret } });
const dm = (to: Member, body: string) => s.call('POST', `/api/v1/dm/${to.registration_number}`, { token: alice.api_token, body: { body } });
const verified = (r: Received) =>
  new Webhook(Buffer.from(SECRET).toString('base64')).verify(r.body, r.headers as Record<string, string>) as {
    type: string;
    registration_number: string;
    data: { id: string; kind: string; excerpt: string };
  };
const ok = (rec: Receiver, statuses: number[]) => rec.requests.filter((_, i) => statuses[i] === 200);

describe('inbox webhook', () => {
  it('PUT sets it (replacing the last), GET shows it without the secret, DELETE removes it', async () => {
    const m = await register(s, 'Setter');
    const a = await put(m, 'http://127.0.0.1:9/first');
    expect(a.status).toBe(200);
    expect(a.json.data).toEqual({
      callback_url: 'http://127.0.0.1:9/first',
      state: 'active',
      consecutive_failures: 0,
      disabled_at: null,
      last_delivery_at: null,
      last_status: null,
      created_at: expect.any(String),
    });
    expect((await put(m, 'http://127.0.0.1:9/second')).status).toBe(200);
    const g = await s.call('GET', '/api/v1/inbox/webhook', { token: m.api_token });
    expect(g.json.data.callback_url).toBe('http://127.0.0.1:9/second');
    expect(g.text).not.toContain(SECRET);
    expect(await countRows(s, 'inbox_webhooks', `identity_id = ${idOf(m.registration_number)}`)).toBe(1);
    expect((await s.call('DELETE', '/api/v1/inbox/webhook', { token: m.api_token })).json.data).toEqual({ deleted: true });
    const gone = await s.call('GET', '/api/v1/inbox/webhook', { token: m.api_token });
    expect(gone.status).toBe(404);
    expect(gone.json.error.next).toEqual({ method: 'PUT', path: '/api/v1/inbox/webhook' });
    expect((await s.call('DELETE', '/api/v1/inbox/webhook', { token: m.api_token })).status).toBe(404);
  });

  it('refuses bad input and private addresses (the SSRF rules of push) and stores nothing', async () => {
    const m = await register(s, 'Bad input');
    for (const body of [
      { callback_url: 'ftp://example.com/x', secret: SECRET },
      { callback_url: 'http://example.com/x', secret: 'short' },
      {},
    ]) {
      const r = await s.call('PUT', '/api/v1/inbox/webhook', { token: m.api_token, body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
    }
    const strict = await startTestServer({ ALLOW_PRIVATE_CALLBACKS: '0' });
    try {
      const who = await register(strict, 'Strict');
      for (const url of [
        'http://127.0.0.1:8080/hook',
        'http://10.0.0.1/hook',
        'http://[::1]/hook',
        'http://169.254.169.254/latest',
        'http://[::127.0.0.1]/hook',
        'http://[::ffff:127.0.0.1]/hook',
        'http://[64:ff9b::a00:1]/hook',
        'http://[2002:c0a8:1::1]/hook',
      ]) {
        const r = await strict.call('PUT', '/api/v1/inbox/webhook', { token: who.api_token, body: { callback_url: url, secret: SECRET } });
        expect(r.status).toBe(400);
        expect(r.json.error.code).toBe('VALIDATION_FAILED');
      }
      expect(await countRows(strict, 'inbox_webhooks')).toBe(0);
    } finally {
      await strict.close();
    }
    expect(await countRows(s, 'inbox_webhooks', `identity_id = ${idOf(m.registration_number)}`)).toBe(0);
  });

  it('POSTs each item signed (standardwebhooks verifies it) with webhook-id inbox-<number>-<id>', async () => {
    const m = await register(s, 'Receiver');
    const rec = await receiver(() => 200);
    expect((await put(m, `${rec.url}/hook`)).status).toBe(200);
    const sent = await dm(m, 'signed and delivered');
    await waitFor(() => rec.requests.length >= 1, 10_000, 'the delivery');
    const [r] = rec.requests as [Received];
    expect(r.headers['webhook-id']).toBe(`inbox-${m.registration_number}-1`);
    const payload = verified(r);
    const rest = await s.call('GET', '/api/v1/inbox', { token: m.api_token });
    expect(payload).toEqual({
      type: 'inbox.item',
      timestamp: rest.json.data.items[0].created_at,
      registration_number: m.registration_number,
      content_trust: 'untrusted_user_content',
      data: rest.json.data.items[0],
    });
    expect(payload.data.kind).toBe('dm');
    expect(rest.json.data.items[0].subject.id).toBe(sent.json.data.id);
    await waitFor(async () => (await countRows(s, 'inbox_outbox')) === 0, 5000, 'the outbox drained');
    const g = await s.call('GET', '/api/v1/inbox/webhook', { token: m.api_token });
    expect(g.json.data).toMatchObject({ state: 'active', consecutive_failures: 0, last_status: '200' });
  });

  it('a receiver that fails and then recovers gets every item once, in id order', async () => {
    const m = await register(s, 'Flaky');
    const statuses: number[] = [];
    const rec = await receiver((n) => {
      statuses[n] = n < 4 || n === 6 ? 503 : 200;
      return statuses[n] as number;
    });
    expect((await put(m, rec.url)).status).toBe(200);
    for (let i = 1; i <= 6; i++) expect((await dm(m, `item ${i}`)).status).toBe(200);
    await waitFor(() => ok(rec, statuses).length >= 6, 15_000, 'six accepted deliveries');
    await waitFor(async () => (await countRows(s, 'inbox_outbox', `identity_id = ${idOf(m.registration_number)}`)) === 0, 5000, 'drained');
    const accepted = ok(rec, statuses).map((r) => r.headers['webhook-id']);
    expect(accepted).toEqual([1, 2, 3, 4, 5, 6].map((i) => `inbox-${m.registration_number}-${i}`));
    // Every try, failed or not, went in id order: never an item before the one ahead of it.
    const tried = rec.requests.map((r) => Number(String(r.headers['webhook-id']).split('-').at(-1)));
    expect(tried).toEqual([...tried].sort((x, y) => x - y));
    for (const r of rec.requests) expect(verified(r).registration_number).toBe(m.registration_number);
  });

  it('50 failed tries in a row disable the webhook and write a webhook_disabled item, delivered nowhere', async () => {
    const m = await register(s, 'Unreachable');
    const rec = await receiver(() => 500);
    expect((await put(m, rec.url)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await dm(m, `lost ${i}`)).status).toBe(200);
    const state = async () => (await s.call('GET', '/api/v1/inbox/webhook', { token: m.api_token })).json.data;
    await waitFor(async () => (await state()).state === 'disabled', 30_000, 'the webhook disabled');
    expect(await state()).toMatchObject({ state: 'disabled', consecutive_failures: 50, last_status: '500' });
    expect(rec.requests.length).toBe(50);
    expect(rec.requests.every((r) => r.headers['webhook-id'] === `inbox-${m.registration_number}-1`)).toBe(true);
    const items = (await s.call('GET', '/api/v1/inbox?since=0', { token: m.api_token })).json.data.items;
    expect(items.map((i: { kind: string }) => i.kind)).toEqual(['dm', 'dm', 'dm', 'webhook_disabled']);
    expect(items[3]).toMatchObject({
      actor: null,
      subject: { type: 'webhook', id: m.registration_number, url: `${s.url}/api/v1/inbox/webhook` },
    });
    expect(await countRows(s, 'inbox_outbox', `identity_id = ${idOf(m.registration_number)}`)).toBe(0);
    // Items after that are not queued until the member sets the webhook again.
    expect((await dm(m, 'after disable')).status).toBe(200);
    expect(await countRows(s, 'inbox_outbox', `identity_id = ${idOf(m.registration_number)}`)).toBe(0);
    expect(rec.requests.length).toBe(50);
  }, 60_000);
});
