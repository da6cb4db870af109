// The stream's ops that act (chat, heartbeat) are operations run by the one operation runner
// (src/transport/runner/operation.ts) with the session's caller: chat is POST /api/v1/chat itself; the
// heartbeat is an operation of the stream's own, since a heartbeat frame costs no database read
// (DECISIONS.md "Reliability promises": the session keeps the member's row).
import { z } from 'zod';
import type { Caller } from '../../domain/caller.js';
import { STATUS_NOTE_MAX } from '../../domain/habitat.js';
import type { Ctx } from '../../domain/ports.js';
import { routeOf } from '../runner/actions.js';
import { type AnyRoute, ok, route } from '../runner/route.js';
import type { Router } from '../runner/router.js';
import { text } from '../runner/schemas.js';

export interface StreamOps {
  chat: AnyRoute;
  heartbeat: AnyRoute;
}

/** The heartbeat's use case, run with the context the runner gives (a keyed op's is its write's
 * transaction: a statement outside it would wait for the embedded store's one connection, held by
 * that very transaction, for good). */
export type HeartbeatCase = (ctx: Ctx, caller: Caller, statusNote: string | undefined) => Promise<unknown>;

export function streamOps(router: Router, heartbeat: HeartbeatCase): StreamOps {
  return {
    chat: routeOf(router, 'POST /api/v1/chat'),
    heartbeat: route({
      method: 'POST',
      path: '/api/v1/stream',
      auth: 'member',
      // A write like any other: it spends the caller's write budget, the session's op budget on
      // top (DECISIONS.md "Every door, the same rules").
      summary: 'A heartbeat over the stream',
      tags: ['stream'],
      body: z.object({ status_note: text(STATUS_NOTE_MAX).optional() }),
      response: z.unknown(),
      handler: async (req, ctx) => ok(await heartbeat(ctx, req.caller, req.body.status_note)),
    }),
  };
}
