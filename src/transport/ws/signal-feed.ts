// The signal topic's feed (DECISIONS.md "Real-time stream": `since` replays missed signal from
// the database). Event ids are signal_emissions.seq. The feed hands emissions on strictly in seq
// order, filling from the database any emission this node never heard of on the bus, and a replay
// never goes past the last emission handed on, so the stream's replay-then-join sends each
// emission once: what is not yet handed on arrives live (held during the replay), not twice.
import { countDbError } from '../../domain/metrics.js';
import type { BusMessage, Ctx } from '../../domain/ports.js';
import { emissionsAfter, lastEmissionSeq } from '../../domain/signal.js';
import type { TopicFeed } from './topics.js';

const FILL_LIMIT = 100;

export interface SignalFeed extends TopicFeed {
  close(): void;
}

export async function signalFeed(ctx: Ctx): Promise<SignalFeed> {
  let delivered = await lastEmissionSeq(ctx);
  const listeners = new Set<(e: BusMessage) => void>();
  let chain: Promise<void> = Promise.resolve();

  const hand = (e: BusMessage): void => {
    delivered = Number(e.id);
    for (const l of listeners) l(e);
  };
  const settle = async (e: BusMessage): Promise<void> => {
    const id = Number(e.id);
    if (!(id > delivered)) return; // handed on already (filled from the database, or a repeat)
    const missed = await emissionsAfter(ctx, delivered, FILL_LIMIT);
    for (const m of missed) if (m.seq < id) hand({ topic: 'signal', id: String(m.seq), data: m.entry });
    hand(e);
  };
  const stop = ctx.bus.subscribe('signal', (e) => {
    chain = chain.then(() =>
      settle(e).catch((err: unknown) => {
        countDbError(ctx.metrics, err);
        ctx.log.warn({ err }, 'signal feed could not settle an emission');
      }),
    );
  });

  return {
    live(handler) {
      listeners.add(handler);
      return () => listeners.delete(handler);
    },
    async replay(since, limit) {
      const rows = await emissionsAfter(ctx, Number(since), limit);
      return rows.filter((m) => m.seq <= delivered).map((m) => ({ topic: 'signal', id: String(m.seq), data: m.entry }));
    },
    close() {
      stop();
      listeners.clear();
    },
  };
}
