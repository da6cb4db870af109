// The outbox deliverers (DESIGN.md "Actors"): push deliveries of signal emissions and inbox items
// to members' webhooks, each one outbox runner given its outbox's SQL and its attempt.
import { INBOX_TOPIC } from '../domain/inbox.js';
import * as hook from '../domain/inbox-webhook.js';
import type { Ctx } from '../domain/ports.js';
import * as outbox from '../domain/push-outbox.js';
import { type DelivererOptions, pushAttempt } from '../transport/push/deliver.js';
import { inboxAttempt } from '../transport/push/inbox-deliver.js';
import { OutboxRunner } from './outbox-runner.js';

/** Push deliveries (DECISIONS.md "Signal, feeds, replies, push"), run by the signal scheduler,
 * which kicks it when an emission's transaction has written its rows. */
export function pushDeliverer(ctx: Ctx, opts: DelivererOptions): OutboxRunner<outbox.OutboxRow> {
  const job = {
    name: 'push',
    claim: (limit: number, leaseMs: number) => outbox.claimDue(ctx, limit, leaseMs),
    pending: () => outbox.pending(ctx),
    attempt: pushAttempt(ctx, opts),
  };
  return new OutboxRunner(ctx, job, opts);
}

/** A pass at least this often: items written by the database alone (a badge reached, from a
 * trigger) or whose bus message was lost are not announced, and still go out. */
const INBOX_POLL_MS = 5000;

/** Inbox webhook deliveries (DECISIONS.md "Inbox"): the claim takes only each member's head item,
 * so a member's items go out one at a time in id order. */
export function inboxDeliverer(ctx: Ctx): OutboxRunner<hook.DueRow> {
  const job = {
    name: 'inbox',
    claim: (limit: number, leaseMs: number) => hook.claimDue(ctx, limit, leaseMs),
    pending: () => hook.pending(ctx),
    attempt: inboxAttempt(ctx),
  };
  const { timeoutMs, backoffBaseMs } = ctx.config.inboxWebhook;
  return new OutboxRunner(ctx, job, { timeoutMs, backoffBaseMs, wakeOn: { topic: INBOX_TOPIC, pollMs: INBOX_POLL_MS } });
}
