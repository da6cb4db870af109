// The presence service the habitat domain talks to (a port): the resident actors of this node,
// backed by Redis when REDIS_URL is set. The actor in src/actors/residents.ts provides it as
// ctx.services.presence while it runs.
import type { Ctx, PresenceService } from './ports.js';

export type { HeartbeatOutcome, PresenceService } from './ports.js';

export function presenceOf(ctx: Ctx): PresenceService {
  const p = ctx.services.presence;
  if (!p) throw new Error('the resident actors are not running on this node');
  return p;
}
