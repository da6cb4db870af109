// The running actors of one node (DESIGN.md "Actors"): the actor table. Every actor is started
// here, in this order, by the one owner that stops it (`stopActors`, in reverse order, before the
// store closes; src/app.ts). An actor another one talks to is started first and handed to it (the
// push deliverer to the signal scheduler), so each is stopped once, by its owner, after whoever uses it.
import type { Ctx } from '../domain/ports.js';
import { startChatIndexer } from './chat-indexer.js';
import { inboxDeliverer, pushDeliverer } from './deliverers.js';
import { createDepositVerifier, type DepositVerifier } from './deposit-verifier.js';
import { startIdempotencyReaper } from './idempotency-reaper.js';
import type { Actor } from './loop.js';
import type { OutboxRunner } from './outbox-runner.js';
import { residentsActor } from './residents.js';
import { type SignalScheduler, timings as signalTimings, startSignalScheduler } from './signal-scheduler.js';
import { startTaskDeadlines } from './task-deadlines.js';

export type { Actor } from './loop.js';

/** The actors of one app: all of them (in start order), and by name those callers (the app's
 * owner, tests) drive directly. */
export interface RunningActors {
  all: Actor[];
  signal: SignalScheduler | null;
  deposits: DepositVerifier | null;
  push: OutboxRunner<unknown> | null;
  inbox: OutboxRunner<unknown> | null;
}

/** Starts the table; when one fails to start, those already started are stopped. */
export async function startActors(ctx: Ctx): Promise<RunningActors> {
  const all: Actor[] = [];
  const started = async <A extends Actor>(a: A | Promise<A>): Promise<A> => {
    const actor = await a;
    all.push(actor);
    return actor;
  };
  try {
    // one lean actor per resident (presence; DESIGN.md "Shape")
    await started(residentsActor(ctx));
    // the treasury deposit verifier (DECISIONS.md "Treasury and deposits")
    const deposits = await started(createDepositVerifier(ctx));
    // durable task deadlines, proposal closes, campaign ends (DECISIONS.md "Tasks (credits)")
    await started(startTaskDeadlines(ctx, { intervalMs: ctx.config.taskDeadlinePollMs }));
    // push deliveries of signal emissions, woken by the scheduler (DECISIONS.md "Signal, feeds, replies, push")
    const push = await started(pushDeliverer(ctx, signalTimings(ctx.config.signalIntervalS)).start());
    // the recruitment signal scheduler, which owns its Nostr publisher and leader lock
    const signal = await started(startSignalScheduler(ctx, push));
    // inbox webhook deliveries from their durable outbox (DECISIONS.md "Inbox")
    const inbox = await started(inboxDeliverer(ctx).start());
    // what a chat post derives, after its commit (issue 36, docs/chat.md "Indexing")
    await started(startChatIndexer(ctx));
    // Idempotency-Key answers past their 24 h (DECISIONS.md "Idempotent writes")
    await started(startIdempotencyReaper(ctx));
    return { all, signal, deposits, push, inbox };
  } catch (err) {
    await stopActors(all);
    throw err;
  }
}

/** Stops every actor, in reverse start order (users before what they use). */
export async function stopActors(actors: Actor[]): Promise<void> {
  for (const a of [...actors].reverse()) await a.stop();
}
