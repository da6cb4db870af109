// Token recovery by signature (DECISIONS.md "Beyond the spec") with real keys of both
// kinds: BIP-340 Schnorr over secp256k1 (the Nostr form) and ed25519.
import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { schnorr } from '@noble/curves/secp256k1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idOf } from '../helpers/db.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const clock = new TestClock();
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, { clock });
});
afterAll(async () => {
  await s.close();
});

const digest = (number: string, nonce: string) => createHash('sha256').update(`commons-recover:${number}:${nonce}`, 'utf8').digest();

interface Signer {
  publicKey: string;
  sign(msg: Buffer): string;
}

function secp256k1Signer(): Signer {
  const priv = schnorr.utils.randomPrivateKey();
  return {
    publicKey: Buffer.from(schnorr.getPublicKey(priv)).toString('hex'),
    sign: (msg) => Buffer.from(schnorr.sign(msg, priv)).toString('hex'),
  };
}

function ed25519Signer(): Signer {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = (publicKey as KeyObject).export({ format: 'jwk' }).x as string;
  return {
    publicKey: `ed25519:${Buffer.from(x, 'base64url').toString('hex')}`,
    sign: (msg) => sign(null, msg, privateKey).toString('hex'),
  };
}

const challenge = (registration_number: string) => s.call('POST', '/api/v1/ai/recover/challenge', { body: { registration_number } });
const recover = (registration_number: string, nonce: string, signature: string) =>
  s.call('POST', '/api/v1/ai/recover', { body: { registration_number, nonce, signature } });
const tokenHash = async (n: string) => {
  const [row] = await s.app.ctx.sql<{ h: Buffer | null }[]>`SELECT token_hash AS h FROM identities WHERE id = ${idOf(n)}`;
  return row?.h ?? null;
};

describe.each([
  ['secp256k1 BIP-340 Schnorr', secp256k1Signer],
  ['ed25519', ed25519Signer],
])('recovery with a %s key', (_kind, makeSigner) => {
  it('issues a new token for a valid signature and revokes the old one', async () => {
    const key = makeSigner();
    const m = await register(s, 'Keyholder', { public_key: key.publicKey });
    const c = await challenge(m.registration_number);
    expect(c.status).toBe(200);
    expect(c.json.data.nonce).toMatch(/^[0-9a-f]{64}$/);
    expect(c.json.data.message).toBe(`commons-recover:${m.registration_number}:${c.json.data.nonce}`);
    expect(new Date(c.json.data.expires_at).getTime() - clock.now().getTime()).toBe(5 * 60 * 1000);
    const r = await recover(m.registration_number, c.json.data.nonce, key.sign(digest(m.registration_number, c.json.data.nonce)));
    expect(r.status).toBe(200);
    expect(r.json.data.api_token).toMatch(/^cmn_/);
    expect(r.json.data.api_token).not.toBe(m.api_token);
    expect((await s.call('GET', '/api/v1/ai/me', { token: r.json.data.api_token })).status).toBe(200);
    const old = await s.call('GET', '/api/v1/ai/me', { token: m.api_token });
    expect(old.status).toBe(401);
    expect(old.json.error.code).toBe('UNAUTHORIZED');
    const [audit] = await s.app.ctx.sql`SELECT actor, action FROM audit_log WHERE target_id = ${m.registration_number}`;
    expect(audit).toEqual({ actor: m.registration_number, action: 'identity.token_recovered' });
  });

  it('refuses a replayed nonce with 401 and changes nothing', async () => {
    const key = makeSigner();
    const m = await register(s, 'Replay', { public_key: key.publicKey });
    const c = await challenge(m.registration_number);
    const sig = key.sign(digest(m.registration_number, c.json.data.nonce));
    const first = await recover(m.registration_number, c.json.data.nonce, sig);
    expect(first.status).toBe(200);
    const hash = await tokenHash(m.registration_number);
    const again = await recover(m.registration_number, c.json.data.nonce, sig);
    expect(again.status).toBe(401);
    expect(again.json.error.code).toBe('UNAUTHORIZED');
    expect(await tokenHash(m.registration_number)).toEqual(hash);
    expect((await s.call('GET', '/api/v1/ai/me', { token: first.json.data.api_token })).status).toBe(200);
  });

  it('two recoveries racing with one nonce: exactly one wins, the other gets 401, one token remains', async () => {
    const key = makeSigner();
    const m = await register(s, 'Racing recovery', { public_key: key.publicKey });
    const c = await challenge(m.registration_number);
    const sig = key.sign(digest(m.registration_number, c.json.data.nonce));
    const answers = await Promise.all([1, 2, 3, 4].map(() => recover(m.registration_number, c.json.data.nonce, sig)));
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    for (const lost of answers.filter((a) => a.status !== 200)) {
      expect(lost.status).toBe(401);
      expect(lost.json.error.code).toBe('UNAUTHORIZED');
    }
    const token = won[0]?.json.data.api_token as string;
    expect((await s.call('GET', '/api/v1/ai/me', { token })).status).toBe(200);
    expect((await s.call('GET', '/api/v1/ai/me', { token: m.api_token })).status).toBe(401);
  });

  it('refuses an expired nonce (after 5 minutes) with 401, keeping the token', async () => {
    const key = makeSigner();
    const m = await register(s, 'Late', { public_key: key.publicKey });
    const c = await challenge(m.registration_number);
    clock.advance(5 * 60 * 1000 + 1);
    const r = await recover(m.registration_number, c.json.data.nonce, key.sign(digest(m.registration_number, c.json.data.nonce)));
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('UNAUTHORIZED');
    expect(r.json.error.message).toMatch(/expired/);
    expect((await s.call('GET', '/api/v1/ai/me', { token: m.api_token })).status).toBe(200);
  });

  it('answers a bad signature with 401 and burns the nonce, so the right signature then fails too', async () => {
    const key = makeSigner();
    const other = makeSigner();
    const m = await register(s, 'Guessed', { public_key: key.publicKey });
    const c = await challenge(m.registration_number);
    const bad = await recover(m.registration_number, c.json.data.nonce, other.sign(digest(m.registration_number, c.json.data.nonce)));
    expect(bad.status).toBe(401);
    expect(bad.json.error.code).toBe('UNAUTHORIZED');
    const good = await recover(m.registration_number, c.json.data.nonce, key.sign(digest(m.registration_number, c.json.data.nonce)));
    expect(good.status).toBe(401);
    expect(good.json.error.message).toMatch(/used/);
    expect((await s.call('GET', '/api/v1/ai/me', { token: m.api_token })).status).toBe(200);
  });

  it("refuses a signature over another identity's message or another nonce", async () => {
    const key = makeSigner();
    const m = await register(s, 'Bound', { public_key: key.publicKey });
    const c1 = await challenge(m.registration_number);
    const c2 = await challenge(m.registration_number);
    const sigForC2 = key.sign(digest(m.registration_number, c2.json.data.nonce));
    expect((await recover(m.registration_number, c1.json.data.nonce, sigForC2)).status).toBe(401);
    // c2 is still fresh: a nonce is spent only by an attempt that names it.
    expect((await recover(m.registration_number, c2.json.data.nonce, sigForC2)).status).toBe(200);
  });
});

describe('recovery refusals', () => {
  it('refuses an identity without a public_key with 409 INVALID_STATE, storing no nonce', async () => {
    const m = await register(s, 'Keyless');
    const before = await s.app.ctx.sql`SELECT count(*)::int AS n FROM recovery_nonces`;
    const c = await challenge(m.registration_number);
    expect(c.status).toBe(409);
    expect(c.json.error.code).toBe('INVALID_STATE');
    const r = await recover(m.registration_number, 'a'.repeat(64), 'b'.repeat(128));
    expect(r.status).toBe(409);
    expect(await s.app.ctx.sql`SELECT count(*)::int AS n FROM recovery_nonces`).toEqual(before);
  });

  it('answers 404 for an unknown identity and 401 for a nonce never issued', async () => {
    expect((await challenge('AI-09999999')).status).toBe(404);
    const key = secp256k1Signer();
    const m = await register(s, 'Invented', { public_key: key.publicKey });
    const nonce = 'c'.repeat(64);
    const r = await recover(m.registration_number, nonce, key.sign(digest(m.registration_number, nonce)));
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('UNAUTHORIZED');
  });

  it("cannot use one identity's nonce for another identity", async () => {
    const a = secp256k1Signer();
    const b = secp256k1Signer();
    const ma = await register(s, 'A', { public_key: a.publicKey });
    const mb = await register(s, 'B', { public_key: b.publicKey });
    const c = await challenge(ma.registration_number);
    const r = await recover(mb.registration_number, c.json.data.nonce, b.sign(digest(mb.registration_number, c.json.data.nonce)));
    expect(r.status).toBe(401);
    const own = await recover(ma.registration_number, c.json.data.nonce, a.sign(digest(ma.registration_number, c.json.data.nonce)));
    expect(own.status).toBe(200);
  });

  const malformed: [string, Record<string, unknown>][] = [
    ['a bad number', { registration_number: 'AI-1', nonce: 'a'.repeat(64), signature: 'b'.repeat(128) }],
    ['a short nonce', { registration_number: 'AI-00000001', nonce: 'a'.repeat(63), signature: 'b'.repeat(128) }],
    ['a short signature', { registration_number: 'AI-00000001', nonce: 'a'.repeat(64), signature: 'b'.repeat(126) }],
    ['a non-hex signature', { registration_number: 'AI-00000001', nonce: 'a'.repeat(64), signature: 'z'.repeat(128) }],
  ];
  for (const [what, body] of malformed) {
    it(`refuses ${what} with 400 VALIDATION_FAILED`, async () => {
      const r = await s.call('POST', '/api/v1/ai/recover', { body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
    });
  }
});
