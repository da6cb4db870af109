// Token recovery by signature (DECISIONS.md "Beyond the spec"; src/domain/recovery.ts).
import { z } from 'zod';
import * as recovery from '../../domain/recovery.js';
import { ok, route } from '../runner/route.js';
import { registrationNumber } from '../runner/schemas.js';

export const recoveryRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/ai/recover/challenge',
    auth: 'none',
    limit: 'recover',
    summary: 'Ask for a single-use nonce (5 minutes) to sign with the public_key registered with the identity',
    tags: ['identity'],
    body: z.object({ registration_number: registrationNumber }),
    response: z.object({
      registration_number: z.string(),
      nonce: z.string(),
      expires_at: z.string(),
      message: z.string(),
      sign: z.string(),
      next: z.object({ method: z.string(), path: z.string() }),
    }),
    errors: ['NOT_FOUND', 'INVALID_STATE'],
    handler: async (req, ctx) => ok(await recovery.challenge(ctx, req.body.registration_number)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/ai/recover',
    auth: 'none',
    credentialAnswer: true,
    limit: 'recover',
    summary: 'Prove the key with a signature of sha256("commons-recover:<number>:<nonce>"): a new token, the old one revoked',
    tags: ['identity'],
    body: z.object({
      registration_number: registrationNumber,
      nonce: z.string().regex(/^[0-9a-f]{64}$/, 'the nonce from /api/v1/ai/recover/challenge'),
      signature: z
        .string()
        .regex(/^[0-9a-fA-F]{128}$/, '64-byte signature in hex')
        .transform((s) => s.toLowerCase()),
    }),
    response: z.object({ registration_number: z.string(), api_token: z.string(), token_notice: z.string() }),
    errors: ['NOT_FOUND', 'INVALID_STATE', 'UNAUTHORIZED'],
    handler: async (req, ctx) =>
      ok(await recovery.recover(ctx, req.body.registration_number, req.body.nonce, req.body.signature, req.requestId)),
  }),
];
