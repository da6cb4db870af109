// The inbox webhook (DECISIONS.md "Inbox"): one per member, each item POSTed signed like push from
// a durable outbox, in id order, retried for 24 h, disabled after 50 failed tries in a row with a
// `webhook_disabled` item. The transport has checked the callback URL (SSRF rules of push).

import type { IdentityRow } from '../store/identities.js';
import * as store from '../store/inbox-webhook.js';
import { txWithRetry } from '../store/retry.js';
import { fail } from './errors.js';
import { addItems, announce, link } from './inbox.js';
import type { Ctx } from './ports.js';
import { formatMember } from './tokens.js';
import { newSecret } from './webhook-secret.js';

export type { DueRow } from '../store/inbox-webhook.js';

/** Failed tries in a row that disable a webhook. */
export const DISABLE_AFTER = 50;
/** How long one item is retried. */
export const RETRY_FOR_MS = 24 * 3600_000;

const WEBHOOK_PATH = '/api/v1/inbox/webhook';

function view(r: store.WebhookRow) {
  return {
    callback_url: r.callback_url,
    state: r.disabled_at ? ('disabled' as const) : ('active' as const),
    consecutive_failures: r.consecutive_failures,
    disabled_at: r.disabled_at?.toISOString() ?? null,
    last_delivery_at: r.last_delivery_at?.toISOString() ?? null,
    last_status: r.last_status,
    created_at: r.created_at.toISOString(),
  };
}

const none = () => fail('NOT_FOUND', 'you have no inbox webhook', { next: { method: 'PUT', path: WEBHOOK_PATH } });

/** Sets the webhook with the given secret, or one generated and told once (src/domain/webhook-secret.ts). */
export async function setWebhook(ctx: Ctx, me: IdentityRow, callbackUrl: string, secret: string | undefined) {
  const key = secret ?? newSecret();
  const out = view(await store.upsert(ctx.sql, me.id, callbackUrl, key));
  return secret === undefined ? { ...out, secret: key } : out;
}

export async function getWebhook(ctx: Ctx, me: IdentityRow) {
  const row = await store.find(ctx.sql, me.id);
  return row ? view(row) : none();
}

export async function deleteWebhook(ctx: Ctx, me: IdentityRow) {
  if (!(await store.remove(ctx.sql, me.id))) return none();
  return { deleted: true as const };
}

/** The delivery id receivers drop repeats by. */
export const deliveryId = (owner: number, itemId: string): string => `inbox-${formatMember(owner)}-${itemId}`;

// The deliverer's view of the outbox (src/actors/deliverers.ts, src/transport/push/inbox-deliver.ts).
export const claimDue = (ctx: Ctx, limit: number, leaseMs: number) => store.claimDue(ctx.sql, limit, leaseMs);
export const delivered = async (ctx: Ctx, owner: number, itemId: string, status: string) => {
  // Recorded before the row goes: a node killed in between delivers again (at least once).
  await store.recordSuccess(ctx.sql, owner, status);
  await store.done(ctx.sql, owner, itemId);
};
export const dropItem = (ctx: Ctx, owner: number, itemId: string) => store.done(ctx.sql, owner, itemId);
export const retryAfter = (ctx: Ctx, owner: number, itemId: string, ms: number) => store.retryAfter(ctx.sql, owner, itemId, ms);
export const recordFailure = (ctx: Ctx, owner: number, status: string) => store.recordFailure(ctx.sql, owner, status);
export const pending = (ctx: Ctx) => store.pending(ctx.sql);

/** Disables a member's webhook and tells the member in its inbox, in one transaction. */
export async function disable(ctx: Ctx, owner: number): Promise<void> {
  const items = await txWithRetry(ctx.sql, async (tx) => {
    if (!(await store.disable(tx, owner))) return [];
    return addItems(tx, [
      {
        owner,
        kind: 'webhook_disabled',
        actor: null,
        subjectType: 'webhook',
        subjectId: formatMember(owner),
        url: link(ctx, WEBHOOK_PATH),
        excerpt: `Your inbox webhook was disabled after ${DISABLE_AFTER} failed deliveries in a row; PUT ${WEBHOOK_PATH} again to resume.`,
      },
    ]);
  });
  await announce(ctx, items);
}
