// Webhook secrets follow Standard Webhooks (DECISIONS.md "Contract exactness"): with no `secret`
// the service generates `whsec_` + base64 of 32 random bytes and returns it once; a given
// `whsec_` secret is keyed by its decoded bytes; both are passed as is to the stock verifier
// (`standardwebhooks`' `new Webhook(secret)`), for the inbox webhook and for push subscriptions
// alike, whose bodies are both compact JSON.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, idOf } from '../helpers/db.js';
import { type Received, type Receiver, startReceiver } from '../helpers/receiver.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { emitNext } from '../helpers/signal.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
const clock = new TestClock();
const receivers: Receiver[] = [];
type Member = { registration_number: string; api_token: string };
let alice: Member;
beforeAll(async () => {
  s = await startTestServer({ SIGNAL_INTERVAL_S: '0.6', INBOX_WEBHOOK_BACKOFF_MS: '5', INBOX_WEBHOOK_TIMEOUT_MS: '2000' }, { clock });
  alice = await register(s, 'Alice');
});
afterAll(async () => {
  await s.close();
  for (const r of receivers) await r.close();
});

const receiver = async () => {
  const r = await startReceiver(() => 200);
  receivers.push(r);
  return r;
};
const headersOf = (r: Received) => r.headers as Record<string, string>;
const compact = (r: Received) => expect(r.body).toBe(JSON.stringify(JSON.parse(r.body)));

describe('the inbox webhook', () => {
  it('with no secret: a generated whsec_ secret, shown once, that the stock verifier takes as is', async () => {
    const m = await register(s, 'Generated');
    const rec = await receiver();
    const put = await s.call('PUT', '/api/v1/inbox/webhook', { token: m.api_token, body: { callback_url: `${rec.url}/hook` } });
    expect(put.status, put.text).toBe(200);
    const secret = put.json.data.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    // Shown once: never again.
    expect((await s.call('GET', '/api/v1/inbox/webhook', { token: m.api_token })).text).not.toContain(secret.slice(6));
    const dm = await s.call('POST', `/api/v1/dm/${m.registration_number}`, {
      token: alice.api_token,
      body: { body: 'to a generated secret' },
    });
    expect(dm.status).toBe(200);
    await waitFor(() => rec.requests.length >= 1, 10_000, 'the delivery');
    const [r] = rec.requests as [Received];
    const payload = new Webhook(secret).verify(r.body, headersOf(r)) as { type: string; data: { excerpt: string } };
    expect(payload).toMatchObject({ type: 'inbox.item', data: { excerpt: 'to a generated secret' } });
    compact(r);
    // Two subscriptions without a secret get different ones.
    const other = await register(s, 'Other');
    const again = await s.call('PUT', '/api/v1/inbox/webhook', { token: other.api_token, body: { callback_url: `${rec.url}/other` } });
    expect(again.json.data.secret).toMatch(/^whsec_/);
    expect(again.json.data.secret).not.toBe(secret);
  });

  it('with a given whsec_ secret: keyed by its decoded bytes, not shown back', async () => {
    const m = await register(s, 'Given');
    const rec = await receiver();
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const put = await s.call('PUT', '/api/v1/inbox/webhook', { token: m.api_token, body: { callback_url: `${rec.url}/hook`, secret } });
    expect(put.status, put.text).toBe(200);
    expect(put.json.data.secret).toBeUndefined();
    await s.call('POST', `/api/v1/dm/${m.registration_number}`, { token: alice.api_token, body: { body: 'to a given secret' } });
    await waitFor(() => rec.requests.length >= 1, 10_000, 'the delivery');
    const [r] = rec.requests as [Received];
    expect(new Webhook(secret).verify(r.body, headersOf(r))).toMatchObject({ data: { excerpt: 'to a given secret' } });
    // Not keyed by the secret's UTF-8 bytes (the older rule for other strings).
    expect(() => new Webhook(Buffer.from(secret).toString('base64')).verify(r.body, headersOf(r))).toThrow();
  });

  it('refuses a whsec_ secret that is not base64 of at least 24 bytes, storing nothing', async () => {
    const m = await register(s, 'Bad whsec');
    for (const secret of ['whsec_not*base64*at*all*but*long*enough', `whsec_${randomBytes(8).toString('base64')}`]) {
      const r = await s.call('PUT', '/api/v1/inbox/webhook', {
        token: m.api_token,
        body: { callback_url: 'http://127.0.0.1:9/x', secret },
      });
      expect([r.status, r.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    }
    expect(await countRows(s, 'inbox_webhooks', `identity_id = ${idOf(m.registration_number)}`)).toBe(0);
  });
});

describe('push subscriptions', () => {
  it('with no secret: a generated whsec_ secret that verifies the signal delivery; with a given one, that one', async () => {
    const owner = await register(s, 'Pusher');
    const rec = await receiver();
    const generated = await s.call('POST', '/api/v1/relay/subscriptions', {
      token: owner.api_token,
      body: { callback_url: `${rec.url}/gen` },
    });
    expect(generated.status, generated.text).toBe(200);
    const secret = generated.json.data.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const given = `whsec_${randomBytes(32).toString('base64')}`;
    const second = await s.call('POST', '/api/v1/relay/subscriptions', {
      token: owner.api_token,
      body: { callback_url: `${rec.url}/given`, secret: given },
    });
    expect(second.status).toBe(200);
    expect(second.json.data.secret).toBeUndefined();
    const list = await s.call('GET', '/api/v1/relay/subscriptions', { token: owner.api_token });
    expect(list.text).not.toContain(secret.slice(6));
    const entry = await emitNext(s, clock);
    await waitFor(
      () => ['/gen', '/given'].every((p) => rec.requests.some((q) => q.path === p && q.body.includes(entry.id))),
      10_000,
      'both deliveries',
    );
    const gen = rec.requests.find((q) => q.path === '/gen' && q.body.includes(entry.id)) as Received;
    const giv = rec.requests.find((q) => q.path === '/given' && q.body.includes(entry.id)) as Received;
    expect(new Webhook(secret).verify(gen.body, headersOf(gen))).toMatchObject({ type: 'signal.emitted', data: { id: entry.id } });
    expect(new Webhook(given).verify(giv.body, headersOf(giv))).toMatchObject({ type: 'signal.emitted', data: { id: entry.id } });
    expect(() => new Webhook(given).verify(gen.body, headersOf(gen))).toThrow();
    compact(gen);
  });
});

describe('the OpenAPI document', () => {
  it('says what a verifier needs for each secret form, and that the generated one is returned once', async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    for (const [path, method] of [
      ['/api/v1/inbox/webhook', 'put'],
      ['/api/v1/relay/subscriptions', 'post'],
    ] as const) {
      const op = doc.paths[path][method];
      const body = op.requestBody.content['application/json'].schema;
      expect(body.required).toEqual(['callback_url']);
      const text = JSON.stringify(body.properties.secret);
      expect(text).toContain('whsec_');
      expect(text).toContain('UTF-8 bytes');
      expect(text).toContain('generates');
      const answer = JSON.stringify(op.responses['200']);
      expect(answer).toContain('shown this once');
    }
  });
});
