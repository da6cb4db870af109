// Webhook signatures (DECISIONS.md "Signal, feeds, replies, push"): X-Commons-Signature with the
// hex HMAC-SHA256 of the body, and the Standard Webhooks headers (v1 = base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>"), both keyed by the UTF-8 bytes of the subscription secret.
import { createHmac } from 'node:crypto';

export function signatureHeaders(secret: string, id: string, timestampS: number, body: string): Record<string, string> {
  const key = Buffer.from(secret, 'utf8');
  const hex = createHmac('sha256', key).update(body, 'utf8').digest('hex');
  const v1 = createHmac('sha256', key).update(`${id}.${timestampS}.${body}`, 'utf8').digest('base64');
  return {
    'x-commons-signature': `sha256=${hex}`,
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': `v1,${v1}`,
  };
}
