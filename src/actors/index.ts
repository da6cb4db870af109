// The running actors of one node (DESIGN.md "Actors"). Each area adds its actor here; app.ts
// starts them after the HTTP server and stops them, in reverse order, before closing the store.
import type { Ctx } from '../domain/ports.js';
import { startChatIndexer } from './chat-indexer.js';
import { inboxDeliverer } from './deliverers.js';
import { createDepositVerifier, type DepositVerifier } from './deposit-verifier.js';
import { startIdempotencyReaper } from './idempotency-reaper.js';
import { residentsActor } from './residents.js';
import { type SignalScheduler, startSignalScheduler } from './signal-scheduler.js';
import { startTaskDeadlines } from './task-deadlines.js';

export interface Actor {
  readonly name: string;
  stop(): Promise<void>;
}

export type ActorFactory = (ctx: Ctx) => Promise<Actor> | Actor;

export const ACTORS: ActorFactory[] = [
  // one lean actor per resident (presence; DESIGN.md "Shape")
  residentsActor,
  // the treasury deposit verifier (DECISIONS.md "Treasury and deposits")
  (ctx) => createDepositVerifier(ctx),
  // durable task deadlines (DECISIONS.md "Tasks (credits)")
  (ctx) => startTaskDeadlines(ctx, { intervalMs: ctx.config.taskDeadlinePollMs }),
  // the recruitment signal scheduler (DECISIONS.md "Signal, feeds, replies, push")
  startSignalScheduler,
  // inbox webhook deliveries from their durable outbox (DECISIONS.md "Inbox")
  (ctx) => inboxDeliverer(ctx).start(),
  // what a chat post derives, after its commit (issue 36, docs/chat.md "Indexing")
  (ctx) => startChatIndexer(ctx),
  // Idempotency-Key answers past their 24 h (DECISIONS.md "Idempotent writes")
  (ctx) => startIdempotencyReaper(ctx),
];

/** The actors of one app, by name where callers (the app's owner, tests) drive them directly. */
export interface RunningActors {
  all: Actor[];
  signal: SignalScheduler | null;
  deposits: DepositVerifier | null;
}

export async function startActors(ctx: Ctx, factories: ActorFactory[] = ACTORS): Promise<RunningActors> {
  const all: Actor[] = [];
  for (const f of factories) all.push(await f(ctx));
  const named = <T extends Actor>(name: string) => (all.find((a) => a.name === name) as T | undefined) ?? null;
  return { all, signal: named<SignalScheduler>('signal-scheduler'), deposits: named<DepositVerifier>('deposit-verifier') };
}

export async function stopActors(actors: Actor[]): Promise<void> {
  for (const a of [...actors].reverse()) await a.stop();
}
