// The operator, as tests act through it: one token for test servers started with operatorEnv(),
// and hiding content through the operator API (never by SQL), as an operator would.
import { expect } from 'vitest';
import type { TestServer } from './server.js';

export const OPERATOR_TOKEN = 'test-operator-token-0123456789abcdef';

export const operatorEnv = (): Record<string, string> => ({ OPERATOR_TOKEN });

/** Revokes a member's token with the operator API, as an operator would (the server needs operatorEnv()). */
export async function revokeToken(s: TestServer, registrationNumber: string): Promise<void> {
  const r = await s.call('POST', `/api/v1/operator/identities/${registrationNumber}/revoke-token`, {
    token: OPERATOR_TOKEN,
    body: { reason: 'test' },
  });
  expect(r.status, r.text).toBe(200);
  expect(r.json.data.revoked).toBe(true);
}

/** Hides one piece of content with POST /api/v1/operator/hide (the server needs operatorEnv()). */
export async function hide(s: TestServer, target_type: string, target_id: string): Promise<void> {
  const r = await s.call('POST', '/api/v1/operator/hide', { token: OPERATOR_TOKEN, body: { target_type, target_id, reason: 'test' } });
  expect(r.status, r.text).toBe(200);
  expect(r.json.data.changed).toBe(true);
}
