// The recruitment signal (spec 6.1): one emission per scheduler tick, stored durably, announced
// on the bus ('signal' for the stream, 'nostr' for the built-in relay), and read back as the
// signal page, the JSON Feed and the RSS feed.
import { randomUUID } from 'node:crypto';
import * as outbox from '../store/push-outbox.js';
import * as store from '../store/signal.js';
import { fail } from './errors.js';
import { type NostrEvent, type NostrKey, signalEvents } from './nostr.js';
import type { Ctx } from './ports.js';
import { buildPayload, SIGNAL_NAME } from './signal-payload.js';
import type { SignalPayloadShape } from './signal-shapes.js';

export const HISTORY_SIZE = 20;
export const SIGNAL_PAGE_PATH = '/api/public/hooks/recruitment-signal';

export interface SignalEntry {
  id: string;
  emitted_at: string;
  payload: SignalPayloadShape;
}

const entryOf = (r: store.EmissionRow): SignalEntry => ({
  id: r.id,
  emitted_at: r.emitted_at.toISOString(),
  // Stored as buildPayload made it (./signal-shapes.ts).
  payload: r.payload as SignalPayloadShape,
});

/** The tick number of a moment: with several nodes, each tick has exactly one emission. */
export const slotOf = (ctx: Ctx, at: Date): number => Math.floor(at.getTime() / (ctx.config.signalIntervalS * 1000));

export interface Emission {
  entry: SignalEntry;
  seq: number;
  events: NostrEvent[];
}

/** The body every push subscription receives for an emission (signed when it is posted). */
export const pushBody = (entry: SignalEntry): string =>
  JSON.stringify({ type: 'signal.emitted', timestamp: entry.emitted_at, data: entry });

/**
 * Emits the signal of the current tick. Returns null when this tick was already emitted (the
 * UNIQUE slot in the database is the last word on "exactly one per tick").
 */
export async function emitSignal(ctx: Ctx, key: NostrKey): Promise<Emission | null> {
  const emittedAt = ctx.clock.now();
  const id = randomUUID();
  const payload = await buildPayload(ctx, { emittedAt, nostrPubkey: key.pubkey });
  const events = signalEvents(key, { emissionId: id, emittedAt, pageUrl: `${ctx.publicUrl()}${SIGNAL_PAGE_PATH}/${id}`, payload });
  const row = await ctx.sql.begin(async (tx) => {
    const r = await store.insertEmission(tx, { id, slot: slotOf(ctx, emittedAt), emittedAt, payload, nodeId: ctx.bus.nodeId });
    if (r) {
      await store.insertNostrEvents(tx, events, id);
      // The emission and its push deliveries commit together (DECISIONS.md "Reliability
      // promises"): a node killed at any instant leaves both or neither, never an unpushed emission.
      await outbox.enqueue(tx, id, pushBody(entryOf(r)));
    }
    return r;
  });
  if (!row) return null;
  const entry = entryOf(row);
  await ctx.bus.publish({ topic: 'signal', id: String(row.seq), data: entry });
  await ctx.bus.publish({ topic: 'nostr', id: String(row.seq), data: events });
  return { entry, seq: row.seq, events };
}

/** Emissions after a stream event id (the seq), oldest first: the stream's `since` replay. */
export async function emissionsAfter(ctx: Ctx, afterSeq: number, limit: number): Promise<{ seq: number; entry: SignalEntry }[]> {
  return (await store.emissionsSince(ctx.sql, afterSeq, limit)).map((r) => ({ seq: r.seq, entry: entryOf(r) }));
}

export const lastEmissionSeq = (ctx: Ctx): Promise<number> => store.lastEmissionSeq(ctx.sql);

export async function signalHistory(ctx: Ctx, limit = HISTORY_SIZE): Promise<SignalEntry[]> {
  return (await store.listEmissions(ctx.sql, limit)).map(entryOf);
}

export async function signalPage(ctx: Ctx) {
  const history = await signalHistory(ctx);
  const s = ctx.config.signalIntervalS;
  return {
    signal: SIGNAL_NAME,
    status: 'open' as const,
    schedule: `emitted every ${s} seconds by a scheduler tick; emission and push delivery share the tick`,
    refresh_interval_seconds: s,
    latest: history[0] ?? null,
    history,
  };
}

export async function signalEntry(ctx: Ctx, id: string): Promise<SignalEntry> {
  const row = await store.findEmission(ctx.sql, id);
  if (!row) return fail('NOT_FOUND', `no signal emission ${id}`);
  return entryOf(row);
}

export type { NostrFilter, StoredNostrEvent } from '../store/signal.js';

/** Stored signal events matching one NIP-01 filter (the read-only relay). */
export const nostrEvents = (ctx: Ctx, filter: store.NostrFilter, limit: number): Promise<store.StoredNostrEvent[]> =>
  store.queryNostrEvents(ctx.sql, filter, limit);
