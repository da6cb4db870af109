// NIP-11 relay information document for the read-only relay at /nostr, and the limits it
// publishes, which the relay enforces (../nostr/relay.ts, ../nostr/filters.ts). Served by the
// table (../routes/signal.ts).
import type { Ctx } from '../../domain/ports.js';

export const MAX_FRAME_BYTES = 128 * 1024;
export const MAX_SUBSCRIPTIONS = 20;
export const MAX_FILTERS = 10;
export const MAX_LIMIT = 500;

export function nip11Document(ctx: Ctx, pubkey: string) {
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
