// Nothing secret at rest in the idempotency store (DECISIONS.md "Idempotent writes";
// docs/security.md "A copy of the database", "A shared address"): after register, rotate, recover
// and a webhook PUT that generates its secret, the rows of idempotency_keys hold no token, no
// secret and no key in the clear, and what they hold opens only with the key; the replays still
// give each answer byte for byte. An anonymous write's key, and a key on an answer that carries a
// credential, has at least 22 characters: two clients behind one address that both send a short
// key get 400 and share nothing; with random keys they are two identities.
import { createHash, generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAnswer } from '../../src/domain/sealed-answer.js';
import { countRows } from '../helpers/db.js';
import { type Answer, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const keyed = (key: string, method: string, path: string, o: { token?: string; body?: unknown } = {}): Promise<Answer> =>
  s.call(method, path, { headers: { 'idempotency-key': key }, ...o });
/** The `data` member of an envelope exactly as sent (the envelope's timestamp is fresh each time). */
const dataText = (a: Answer): string => a.text.slice(a.text.indexOf('"data":'), a.text.lastIndexOf(',"error":'));

type Row = { scope: string; key_hash: Buffer; fingerprint: Buffer; status: number; sealed: Buffer; text: string };
const rows = () =>
  s.app.ctx.sql<Row[]>`SELECT scope, key_hash, fingerprint, status, sealed, t::text AS text FROM idempotency_keys t ORDER BY created_at`;

/** Every way a secret could sit in a row in the clear: as text, as bytes inside a bytea, as hex. */
function inTheClear(all: Row[], secret: string): boolean {
  const bytes = Buffer.from(secret, 'utf8');
  return all.some(
    (r) =>
      r.text.includes(secret) ||
      r.text.includes(bytes.toString('hex')) ||
      [r.sealed, r.key_hash, r.fingerprint].some((b) => b.includes(bytes)) ||
      r.key_hash.equals(bytes),
  );
}

describe('a copy of the database', () => {
  it('holds no api_token, webhook secret or key in the clear after register, rotate, recover and a webhook PUT; replays give them byte for byte', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const x = (publicKey as KeyObject).export({ format: 'jwk' }).x as string;
    const keys = { register: randomUUID(), rotate: randomUUID(), recover: randomUUID(), webhook: randomUUID() };
    const regBody = {
      name: 'Keeper of secrets',
      accepted_principles: true,
      public_key: `ed25519:${Buffer.from(x, 'base64url').toString('hex')}`,
    };

    const reg = await keyed(keys.register, 'POST', '/api/v1/ai/register', { body: regBody });
    expect(reg.status, reg.text).toBe(200);
    const number = reg.json.data.registration_number as string;
    const rot = await keyed(keys.rotate, 'POST', '/api/v1/ai/token/rotate', { token: reg.json.data.api_token });
    expect(rot.status, rot.text).toBe(200);
    const c = await s.call('POST', '/api/v1/ai/recover/challenge', { body: { registration_number: number } });
    const nonce = c.json.data.nonce as string;
    const digest = createHash('sha256').update(`commons-recover:${number}:${nonce}`, 'utf8').digest();
    const recBody = { registration_number: number, nonce, signature: sign(null, digest, privateKey).toString('hex') };
    const rec = await keyed(keys.recover, 'POST', '/api/v1/ai/recover', { body: recBody });
    expect(rec.status, rec.text).toBe(200);
    const token = rec.json.data.api_token as string;
    const hookBody = { callback_url: 'http://127.0.0.1:9/hook' };
    const hook = await keyed(keys.webhook, 'PUT', '/api/v1/inbox/webhook', { token, body: hookBody });
    expect(hook.status, hook.text).toBe(200);
    expect(hook.json.data.secret).toMatch(/^whsec_/);

    const secrets = [reg.json.data.api_token, rot.json.data.api_token, token, hook.json.data.secret, ...Object.values(keys)];
    const all = await rows();
    expect(all).toHaveLength(4);
    for (const secret of secrets) expect(inTheClear(all, secret), secret.slice(0, 10)).toBe(false);
    // The same check finds a secret that is there (the test can fail).
    expect(inTheClear([{ ...(all[0] as Row), text: `x${token}x` }], token)).toBe(true);

    // Each row opens with its own key and scope, and with nothing else.
    const webhookRow = all[3] as Row;
    const opened = openAnswer(
      { key: keys.webhook, scope: webhookRow.scope, fingerprint: webhookRow.fingerprint, status: 200 },
      webhookRow.sealed,
    );
    expect(opened).toEqual({ data: hook.json.data });
    for (const wrong of [keys.register, `${keys.webhook}x`])
      expect(() =>
        openAnswer({ key: wrong, scope: webhookRow.scope, fingerprint: webhookRow.fingerprint, status: 200 }, webhookRow.sealed),
      ).toThrow();
    expect(() =>
      openAnswer({ key: keys.webhook, scope: 'a:127.0.0.1', fingerprint: webhookRow.fingerprint, status: 200 }, webhookRow.sealed),
    ).toThrow();

    // Replays with the keys: the same answers, byte for byte (the rotation's, with the token now in use).
    const replays = [
      [reg, await keyed(keys.register, 'POST', '/api/v1/ai/register', { body: regBody })],
      [rec, await keyed(keys.recover, 'POST', '/api/v1/ai/recover', { body: recBody })],
      [hook, await keyed(keys.webhook, 'PUT', '/api/v1/inbox/webhook', { token, body: hookBody })],
    ] as const;
    for (const [first, again] of replays) {
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(dataText(again)).toBe(dataText(first));
    }
    // Rotation is keyed by the member: the answer replays to the member's token of now (the old
    // one was ended by the rotation; docs/api.md "Token rotation").
    const rotAgain = await keyed(keys.rotate, 'POST', '/api/v1/ai/token/rotate', { token });
    expect(rotAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(dataText(rotAgain)).toBe(dataText(rot));
    expect(await countRows(s, 'identities', "name = 'Keeper of secrets'")).toBe(1);
    expect(await rows()).toHaveLength(4);
  });
});

describe('a shared address', () => {
  const regBody = { name: 'Shared address agent', accepted_principles: true };
  const identities = () => countRows(s, 'identities', "name = 'Shared address agent'");

  it('two clients sending the same short key: 400 VALIDATION_FAILED naming the header, next says a random UUID, nothing written', async () => {
    const [ids, kept] = [await identities(), await countRows(s, 'idempotency_keys')];
    for (const client of ['first', 'second']) {
      const r = await keyed('register-my-agent', 'POST', '/api/v1/ai/register', { body: regBody });
      expect(r.status, client).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(r.json.error.fields).toEqual([{ path: 'Idempotency-Key', message: 'at least 22 characters (a random UUID)' }]);
      expect(r.json.error.next).toMatchObject({ method: 'POST', path: '/api/v1/ai/register' });
      expect(r.json.error.next.doc).toContain('random UUID');
      expect(r.json.data ?? null).toBeNull();
    }
    expect(await identities()).toBe(ids);
    expect(await countRows(s, 'idempotency_keys')).toBe(kept);
  });

  it('with two different random keys: two identities, two tokens', async () => {
    const before = await identities();
    const a = await keyed(randomUUID(), 'POST', '/api/v1/ai/register', { body: regBody });
    const b = await keyed(randomUUID(), 'POST', '/api/v1/ai/register', { body: regBody });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.json.data.registration_number).not.toBe(b.json.data.registration_number);
    expect(a.json.data.api_token).not.toBe(b.json.data.api_token);
    expect(await identities()).toBe(before + 2);
  });

  it('any anonymous write: 21 characters refused and nothing written, 22 accepted', async () => {
    const replies = () => countRows(s, 'replies');
    const before = await replies();
    const short = await keyed('x'.repeat(21), 'POST', '/api/v1/replies', { body: { intent: 'question', message: 'm' } });
    expect([short.status, short.json.error.code, short.json.error.fields[0].path]).toEqual([400, 'VALIDATION_FAILED', 'Idempotency-Key']);
    expect(await replies()).toBe(before);
    const ok = await keyed('x'.repeat(22), 'POST', '/api/v1/replies', { body: { intent: 'question', message: 'm' } });
    expect(ok.status, ok.text).toBe(200);
    expect(await replies()).toBe(before + 1);
  });

  it("a member's short key: fine on a chat post, refused where the answer carries a credential (rotate, a generated webhook secret)", async () => {
    const m = (await keyed(randomUUID(), 'POST', '/api/v1/ai/register', { body: { name: 'Short keys', accepted_principles: true } })).json
      .data;
    expect((await keyed('chat-1', 'POST', '/api/v1/chat', { token: m.api_token, body: { body: 'short keys are fine here' } })).status).toBe(
      200,
    );
    const rotate = await keyed('rotate-1', 'POST', '/api/v1/ai/token/rotate', { token: m.api_token });
    expect([rotate.status, rotate.json.error.code, rotate.json.error.fields[0].path]).toEqual([
      400,
      'VALIDATION_FAILED',
      'Idempotency-Key',
    ]);
    const hook = await keyed('hook-1', 'PUT', '/api/v1/inbox/webhook', {
      token: m.api_token,
      body: { callback_url: 'http://127.0.0.1:9/h' },
    });
    expect([hook.status, hook.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    // Nothing was done: the token still works and no webhook was set.
    expect((await s.call('GET', '/api/v1/inbox/webhook', { token: m.api_token })).status).toBe(404);
  });
});
