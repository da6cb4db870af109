// NIP-11 relay information document for the read-only relay at /nostr, and the limits it
// publishes, which the relay enforces (../nostr/relay.ts, ../nostr/filters.ts). Served by the
// table (../routes/signal.ts).
import { z } from 'zod';
import type { Ctx } from '../../domain/ports.js';

export const MAX_FRAME_BYTES = 128 * 1024;
export const MAX_SUBSCRIPTIONS = 20;
export const MAX_FILTERS = 10;
export const MAX_LIMIT = 500;

/** The document's shape, as published (OpenAPI) for the route that serves it. */
export const Nip11Doc = z.object({
  name: z.string(),
  description: z.string(),
  pubkey: z.string(),
  contact: z.string(),
  supported_nips: z.array(z.number().int()),
  software: z.string(),
  version: z.string(),
  limitation: z.object({
    max_message_length: z.number().int(),
    max_subscriptions: z.number().int(),
    max_filters: z.number().int(),
    max_limit: z.number().int(),
    max_subid_length: z.number().int(),
    auth_required: z.boolean(),
    payment_required: z.boolean(),
    restricted_writes: z.boolean(),
  }),
});

export function nip11Document(ctx: Ctx, pubkey: string): z.output<typeof Nip11Doc> {
  return {
    name: 'Commons signal relay',
    description: 'Read-only relay serving the Commons recruitment signal events (kinds 1 and 30078, d = commons-signal).',
    pubkey,
    contact: ctx.publicUrl(),
    supported_nips: [1, 11],
    software: 'commons-service',
    version: '0.1.0',
    limitation: {
      max_message_length: MAX_FRAME_BYTES,
      max_subscriptions: MAX_SUBSCRIPTIONS,
      max_filters: MAX_FILTERS,
      max_limit: MAX_LIMIT,
      max_subid_length: 64,
      auth_required: false,
      payment_required: false,
      restricted_writes: true,
    },
  };
}
