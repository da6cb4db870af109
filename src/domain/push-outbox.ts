// The push deliverer's durable outbox (DESIGN.md "Effects leave through a durable outbox"), as
// the transport sees it: the store's SQL run on the context's database.
import * as store from '../store/push-outbox.js';
import type { Ctx } from './ports.js';

export type { OutboxRow } from '../store/push-outbox.js';

export const claimDue = (ctx: Ctx, limit: number, leaseMs: number) => store.claimDue(ctx.sql, limit, leaseMs);
export const done = (ctx: Ctx, subscriptionId: string, emissionId: string) => store.done(ctx.sql, subscriptionId, emissionId);
export const retryAfter = (ctx: Ctx, subscriptionId: string, emissionId: string, ms: number) =>
  store.retryAfter(ctx.sql, subscriptionId, emissionId, ms);
export const pending = (ctx: Ctx) => store.pending(ctx.sql);
