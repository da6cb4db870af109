// The stream's sweep: slow consumers (over 1 MiB buffered) are closed with 1013 "try again later";
// a socket that answered nothing for a whole ping period is dead and is dropped; once a ping
// period every member session's token is checked again (a lost bus message; session-end.ts).
import type { Ctx } from '../../domain/ports.js';
import { MAX_BACKPRESSURE_BYTES } from './frames.js';
import type { Socket } from './session.js';
import type { SessionEnds } from './session-end.js';

// The slow-consumer rule is enforced by a sweep, so the close carries 1013; uWS's own limit sits
// well above it only as a memory backstop between sweeps.
export const SWEEP_MS = 100;

export interface Sweep {
  /** Sweeps run since start. */
  ticks(): number;
  /** Sessions closed with 1013 for passing the backpressure bound, since start. */
  slowClosed(): number;
  stop(): void;
}

export function startSweep(ctx: Ctx, sockets: Set<Socket>, ends: SessionEnds): Sweep {
  const pingEvery = Math.max(1, Math.round((ctx.config.streamPingIntervalS * 1000) / SWEEP_MS));
  let ticks = 0;
  let slowClosed = 0;
  const timer = setInterval(() => {
    const ping = ++ticks % pingEvery === 0;
    if (ping) void ends.recheck();
    for (const ws of sockets) {
      const s = ws.getUserData();
      if (ws.getBufferedAmount() > MAX_BACKPRESSURE_BYTES) {
        s.open = false;
        slowClosed++;
        // Outside any uWS callback (a timer): written inside the socket's own cork.
        ws.cork(() => ws.end(1013, 'slow consumer: backpressure over 1 MiB'));
        continue;
      }
      if (!ping) continue;
      if (!s.alive) {
        ws.close();
        continue;
      }
      s.alive = false;
      ws.ping();
    }
  }, SWEEP_MS);
  timer.unref();
  return { ticks: () => ticks, slowClosed: () => slowClosed, stop: () => clearInterval(timer) };
}
