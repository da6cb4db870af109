// Nothing secret at rest (DECISIONS.md "Idempotent writes"): the idempotency store keeps a key as
// its SHA-256 and an answer only sealed with AES-256-GCM under a key derived from the
// Idempotency-Key itself (HKDF-SHA256, the caller's scope as salt). A repeat that presents the key
// can open its answer (an api_token, a generated webhook secret) and give it back byte for byte; a
// copy of the database holds neither the key nor anything that opens the answer. Every answer is
// sealed, not only those that carry a credential: no list of credential fields to keep up to date.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const INFO = 'commons idempotent answer v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What the store keeps instead of the key. */
export const keyHashOf = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

const answerKey = (key: string, scope: string): Buffer => Buffer.from(hkdfSync('sha256', key, scope, INFO, 32));

/** The parts of the row the seal binds besides the answer (a row's status or fingerprint swapped
 * for another's fails to open). */
const boundTo = (fingerprint: Buffer, status: number): Buffer => Buffer.concat([fingerprint, Buffer.from(String(status))]);

export interface SealInput {
  key: string;
  scope: string;
  fingerprint: Buffer;
  status: number;
}

/** iv (12 bytes) || tag (16) || ciphertext of the answer's JSON text. */
export function sealAnswer(k: SealInput, answer: unknown): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', answerKey(k.key, k.scope), iv);
  cipher.setAAD(boundTo(k.fingerprint, k.status));
  const body = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The answer a sealed row holds; throws when the key, scope, fingerprint or status is not the one
 * it was sealed with (or the bytes were changed). */
export function openAnswer(k: SealInput, sealed: Buffer): unknown {
  const decipher = createDecipheriv('aes-256-gcm', answerKey(k.key, k.scope), sealed.subarray(0, IV_BYTES));
  decipher.setAAD(boundTo(k.fingerprint, k.status));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const text = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  return JSON.parse(text);
}
