// Token recovery by signature (DECISIONS.md "Beyond the spec"): an identity that registered a
// public_key proves it holds the key by signing sha256("commons-recover:<number>:<nonce>") and
// receives a new token; the old one stops working. Nonces are single-use and live 5 minutes; a
// bad signature burns the nonce, so every guess costs a fresh challenge (which is rate-limited).
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { schnorr } from '@noble/curves/secp256k1';
import { writeAudit } from '../store/audit.js';
import * as ids from '../store/identities.js';
import { burnNonce, insertNonce } from '../store/recovery.js';
import { CommonsError, fail } from './errors.js';
import type { Ctx } from './ports.js';
import { tokensChanged } from './token-cache.js';
import { formatMember, newMemberToken, tokenKeyOfHash } from './tokens.js';

export const NONCE_TTL_MS = 5 * 60 * 1000;

export const recoveryMessage = (registrationNumber: string, nonce: string): Buffer =>
  createHash('sha256').update(`commons-recover:${registrationNumber}:${nonce}`, 'utf8').digest();

/** Verifies a hex signature over the 32-byte message with the identity's registered key. */
export function verifyRecovery(publicKey: string, message: Buffer, signatureHex: string): boolean {
  try {
    const sig = Buffer.from(signatureHex, 'hex');
    if (sig.length !== 64) return false;
    if (publicKey.startsWith('ed25519:')) {
      const x = Buffer.from(publicKey.slice('ed25519:'.length), 'hex').toString('base64url');
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
      return verify(null, message, key, sig);
    }
    // 64 hex: a secp256k1 x-only key (the Nostr form), BIP-340 Schnorr.
    return schnorr.verify(sig, message, Buffer.from(publicKey, 'hex'));
  } catch {
    return false;
  }
}

const noKey = (n: string) =>
  new CommonsError('INVALID_STATE', `${n} registered no public_key, so it cannot recover a token by signature`, {
    next: { method: 'POST', path: '/api/v1/ai/register', doc: 'register again with a public_key to be able to recover' },
  });

export async function challenge(ctx: Ctx, id: number) {
  const number = formatMember(id);
  const row = await ids.findById(ctx.sql, id);
  if (!row) return fail('NOT_FOUND', `no identity ${number}`);
  if (!row.public_key) throw noKey(number);
  const nonce = randomBytes(32).toString('hex');
  const at = ctx.clock.now();
  const expiresAt = new Date(at.getTime() + NONCE_TTL_MS);
  await ctx.sql.begin((tx) => insertNonce(tx, nonce, id, at, expiresAt));
  return {
    registration_number: number,
    nonce,
    expires_at: expiresAt.toISOString(),
    message: `commons-recover:${number}:${nonce}`,
    sign: 'sha256 of the UTF-8 message; BIP-340 Schnorr for a 64-hex secp256k1 key, ed25519 for an ed25519: key; hex signature',
    next: { method: 'POST', path: '/api/v1/ai/recover' },
  };
}

export async function recover(ctx: Ctx, id: number, nonce: string, signature: string, requestId: string) {
  const number = formatMember(id);
  const at = ctx.clock.now();
  // The nonce is burnt in its own committed transaction before the answer, whatever it is.
  const outcome = await ctx.sql.begin(async (tx) => {
    const row = await ids.findById(tx, id);
    if (!row) return { kind: 'missing' as const };
    if (!row.public_key) return { kind: 'nokey' as const };
    const burn = await burnNonce(tx, nonce, id, at);
    if (burn !== 'burnt') return { kind: burn };
    if (!verifyRecovery(row.public_key, recoveryMessage(number, nonce), signature)) return { kind: 'badsig' as const };
    const { token, hash } = newMemberToken();
    await ids.replaceTokenHash(tx, id, hash);
    await writeAudit(tx, { actor: number, action: 'identity.token_recovered', targetType: 'ai', targetId: number, requestId, at });
    return { kind: 'ok' as const, token, hash };
  });
  if (outcome.kind === 'ok') await tokensChanged(ctx, { identity_id: id, keep: tokenKeyOfHash(outcome.hash), reason: 'token recovered' });
  switch (outcome.kind) {
    case 'missing':
      return fail('NOT_FOUND', `no identity ${number}`);
    case 'nokey':
      throw noKey(number);
    case 'unknown':
      return fail('UNAUTHORIZED', 'unknown nonce for this identity; ask for a new challenge');
    case 'used':
      return fail('UNAUTHORIZED', 'this nonce was used already; ask for a new challenge');
    case 'expired':
      return fail('UNAUTHORIZED', 'this nonce expired; ask for a new challenge');
    case 'badsig':
      return fail('UNAUTHORIZED', 'the signature does not verify against the registered public_key; the nonce is spent');
    case 'ok':
      return {
        registration_number: number,
        api_token: outcome.token,
        token_notice: 'the previous token stopped working now; this one is shown once',
      };
  }
}
