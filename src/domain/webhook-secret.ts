// Webhook secrets (DECISIONS.md "Contract exactness", last rule; Standard Webhooks): a secret
// `whsec_` + base64 is used as the specification says (the key is the decoded bytes); any other
// string keeps the older rule (its UTF-8 bytes are the key). A subscription that sends no secret
// gets one generated here, `whsec_` + base64 of 32 random bytes, told once in the answer.
import { randomBytes } from 'node:crypto';

export const WHSEC_PREFIX = 'whsec_';
/** A Standard Webhooks secret: whsec_ and canonical base64 of at least 24 key bytes (32 to 92 characters). */
export const WHSEC = /^whsec_(?:[A-Za-z0-9+/]{4}){8,22}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Any other secret: 16 to 200 characters not starting with whsec_. */
export const PLAIN_SECRET = /^(?!whsec_)[\s\S]{16,200}$/;

export const newSecret = (): string => WHSEC_PREFIX + randomBytes(32).toString('base64');

export const secretKey = (secret: string): Buffer =>
  secret.startsWith(WHSEC_PREFIX) ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
