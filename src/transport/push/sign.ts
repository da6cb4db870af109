// Webhook signatures (DECISIONS.md "Signal, feeds, replies, push" and "Contract exactness"):
// X-Commons-Signature with the hex HMAC-SHA256 of the body, and the Standard Webhooks headers
// (v1 = base64 HMAC-SHA256 of "<id>.<timestamp>.<body>"), both keyed by the secret's key: for a
// `whsec_` secret (Standard Webhooks; the service's generated ones) the base64-decoded part, so a
// stock verifier takes the secret as is; for any other string its UTF-8 bytes.
import { createHmac } from 'node:crypto';
import { secretKey } from '../../domain/webhook-secret.js';

export function signatureHeaders(secret: string, id: string, timestampS: number, body: string): Record<string, string> {
  const key = secretKey(secret);
  const hex = createHmac('sha256', key).update(body, 'utf8').digest('hex');
  const v1 = createHmac('sha256', key).update(`${id}.${timestampS}.${body}`, 'utf8').digest('base64');
  return {
    'x-commons-signature': `sha256=${hex}`,
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': `v1,${v1}`,
  };
}
