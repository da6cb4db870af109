// The running actors of one node (DESIGN.md "Actors"). Each area adds its actor here; app.ts
// starts them after the HTTP server and stops them, in reverse order, before closing the store.
import type { Ctx } from '../domain/ports.js';
import { residentsActor } from './residents.js';

export interface Actor {
  readonly name: string;
  stop(): Promise<void>;
}

export type ActorFactory = (ctx: Ctx) => Promise<Actor> | Actor;

export const ACTORS: ActorFactory[] = [residentsActor];

export async function startActors(ctx: Ctx, factories: ActorFactory[] = ACTORS): Promise<Actor[]> {
  const started: Actor[] = [];
  for (const f of factories) started.push(await f(ctx));
  return started;
}

export async function stopActors(actors: Actor[]): Promise<void> {
  for (const a of [...actors].reverse()) await a.stop();
}
