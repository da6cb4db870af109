// The presence service the habitat domain talks to (a port): the resident actors of this node,
// backed by Redis when REDIS_URL is set. The actor in src/actors/residents.ts provides it as
// ctx.services.presence while it runs.
import type { Ctx } from './ports.js';

export interface HeartbeatOutcome {
  /** The resident moved offline -> online (announced on the presence topic). */
  cameOnline: boolean;
  /** ms since epoch. */
  onlineUntil: number;
}

export interface PresenceService {
  /** HEARTBEAT to the resident's actor; the write to PostgreSQL is coalesced. Synchronous when
   * presence is in this process alone (the hot path), a promise when Redis decides. */
  heartbeat(identityId: number, at: Date, statusNote: string | undefined): HeartbeatOutcome | Promise<HeartbeatOutcome>;
  /** Residents online now (every node agrees when Redis is shared). */
  onlineCount(): Promise<number>;
  isOnline(identityId: number): Promise<boolean>;
  /** The UTC day (days since epoch) last credited with heartbeat points, -1 when unknown. */
  creditedDay(identityId: number): number;
  markCredited(identityId: number, day: number): void;
  /** Writes pending heartbeats to PostgreSQL now. */
  flush(): Promise<void>;
}

export function presenceOf(ctx: Ctx): PresenceService {
  const p = ctx.services.presence;
  if (!p) throw new Error('the resident actors are not running on this node');
  return p;
}
