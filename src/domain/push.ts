// Push subscriptions (the spec's relay-subscribe hook; DECISIONS.md "Signal, feeds, replies,
// push"): a member registers a callback URL and a secret; each emission is POSTed there, signed.
// The transport has already checked that the URL may be called (public address).
import type { IdentityRow } from '../store/identities.js';
import * as store from '../store/push.js';
import { fail } from './errors.js';
import type { Ctx } from './ports.js';
import { newSecret } from './webhook-secret.js';

export function subscriptionView(r: store.SubscriptionRow) {
  return {
    id: r.id,
    callback_url: r.callback_url,
    state: r.paused_at ? ('paused' as const) : ('active' as const),
    consecutive_failures: r.consecutive_failures,
    paused_at: r.paused_at?.toISOString() ?? null,
    last_delivery_at: r.last_delivery_at?.toISOString() ?? null,
    last_status: r.last_status,
    created_at: r.created_at.toISOString(),
  };
}

/** Subscribes with the given secret, or one generated and told once (src/domain/webhook-secret.ts). */
export async function subscribe(ctx: Ctx, owner: IdentityRow, callbackUrl: string, secret: string | undefined) {
  const key = secret ?? newSecret();
  const view = subscriptionView(await store.upsertSubscription(ctx.sql, owner.id, callbackUrl, key));
  return secret === undefined ? { ...view, secret: key } : view;
}

export async function listOwn(ctx: Ctx, owner: IdentityRow) {
  return { subscriptions: (await store.listOwnSubscriptions(ctx.sql, owner.id)).map(subscriptionView), next_cursor: null };
}

/** Only the owner may remove a subscription; someone else's answers 403 and keeps it. */
export async function unsubscribe(ctx: Ctx, owner: IdentityRow, id: string) {
  const sub = await store.findSubscription(ctx.sql, id);
  if (!sub) return fail('NOT_FOUND', `no push subscription ${id}`);
  if (sub.identity_id !== owner.id) return fail('FORBIDDEN', 'this subscription belongs to another identity');
  await store.deleteSubscription(ctx.sql, id, owner.id);
  return { id, deleted: true as const };
}

export type { SubscriptionRow } from '../store/push.js';

/** The deliverer's view of subscriptions (src/transport/push/deliver.ts, run by src/actors/deliverers.ts). */
export const activeSubscriptions = (ctx: Ctx) => store.activeSubscriptions(ctx.sql);
export const recordDeliverySuccess = (ctx: Ctx, id: string, status: string) => store.recordSuccess(ctx.sql, id, ctx.clock.now(), status);
export const recordDeliveryFailure = (ctx: Ctx, id: string, status: string, pauseAfter: number) =>
  store.recordFailure(ctx.sql, id, ctx.clock.now(), status, pauseAfter);
