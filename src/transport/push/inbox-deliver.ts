// Delivers inbox items to members' webhooks (DECISIONS.md "Inbox"), signed exactly like push
// (Standard Webhooks headers, webhook-id `inbox-<number>-<id>`), from the durable outbox that
// inbox_add fills in each item's own transaction: a node killed between tries loses nothing, any
// node drains due rows (leased while posted), and each member's items go out one at a time in id
// order. A try that fails waits base x 2^(tries-1) (capped); an item is given up after 24 h; 50
// failed tries in a row disable the webhook, which writes a `webhook_disabled` item.
import * as hook from '../../domain/inbox-webhook.js';
import type { Ctx } from '../../domain/ports.js';
import { postJson } from './deliver.js';
import { signatureHeaders } from './sign.js';

/** One try of a member's head item, run by the inbox deliverer (src/actors/deliverers.ts);
 * resolves to when the runner should look again (0: the member's next item is due now). */
export function inboxAttempt(ctx: Ctx) {
  const opts = ctx.config.inboxWebhook;
  return async (row: hook.DueRow, signal: AbortSignal): Promise<number | null> => {
    // The context's clock (the wall clock in production; receivers check the signature's
    // timestamp against their own), as push does.
    const ts = Math.floor(ctx.clock.now().getTime() / 1000);
    const id = hook.deliveryId(row.identity_id, row.item_id);
    // Compact JSON, as push bodies are (the outbox holds PostgreSQL's jsonb text, spaced).
    const body = JSON.stringify(JSON.parse(row.body));
    const res = await postJson(row.callback_url, signatureHeaders(row.secret, id, ts, body), body, {
      timeoutMs: opts.timeoutMs,
      allowPrivate: ctx.config.allowPrivateCallbacks,
      signal,
    });
    // Stopping: the row stays leased, and the next run (this node's or another's) tries again.
    if (signal.aborted && !res.ok) return null;
    if (res.ok) {
      await hook.delivered(ctx, row.identity_id, row.item_id, res.status);
      // The member's next item is due now.
      return 0;
    }
    const failures = await hook.recordFailure(ctx, row.identity_id, res.status);
    if (failures !== null && failures >= hook.DISABLE_AFTER) {
      ctx.log.warn({ member: row.identity_id }, `inbox webhook disabled after ${hook.DISABLE_AFTER} failed tries`);
      await hook.disable(ctx, row.identity_id);
      return null;
    }
    if (ctx.clock.now().getTime() - new Date(row.first_at).getTime() >= hook.RETRY_FOR_MS) {
      await hook.dropItem(ctx, row.identity_id, row.item_id);
      return 0;
    }
    const wait = Math.min(opts.backoffMaxMs, opts.backoffBaseMs * 2 ** Math.min(30, row.attempts - 1));
    await hook.retryAfter(ctx, row.identity_id, row.item_id, wait);
    return wait;
  };
}
