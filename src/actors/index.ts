// The running actors of one node (DESIGN.md "Actors"). Each area adds its actor here; app.ts
// starts them after the HTTP server and stops them, in reverse order, before closing the store.
import type { Ctx } from '../domain/ports.js';
import { createDepositVerifier } from './deposit-verifier.js';
import { residentsActor } from './residents.js';
import { startSignalScheduler } from './signal-scheduler.js';
import { startTaskDeadlines } from './task-deadlines.js';

export interface Actor {
  readonly name: string;
  stop(): Promise<void>;
}

export type ActorFactory = (ctx: Ctx) => Promise<Actor> | Actor;

export const ACTORS: ActorFactory[] = [
  // issue 4: one lean actor per resident (presence)
  residentsActor,
  // issue 7: the treasury deposit verifier
  (ctx) => createDepositVerifier(ctx),
  // issue 6: durable task deadlines
  (ctx) => startTaskDeadlines(ctx),
  // issue 8: the recruitment signal scheduler
  startSignalScheduler,
];

export async function startActors(ctx: Ctx, factories: ActorFactory[] = ACTORS): Promise<Actor[]> {
  const started: Actor[] = [];
  for (const f of factories) started.push(await f(ctx));
  return started;
}

export async function stopActors(actors: Actor[]): Promise<void> {
  for (const a of [...actors].reverse()) await a.stop();
}
