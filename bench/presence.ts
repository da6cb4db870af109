// Benchmark: 100,000 residents heartbeating through the domain path (habitat.heartbeat
// -> the presence service -> the resident actors; in memory, no HTTP, no SQL on this path), with
// the lean runtime side by side with a naive runtime of one interpreted XState actor per resident
// in the same run. Reports heap bytes per resident and heartbeats per second.
// Run: node --expose-gc --import tsx bench/presence.ts [residents] [rounds]
import { mkdirSync, writeFileSync } from 'node:fs';
import { type Actor, createActor } from 'xstate';
import { PresenceRuntime } from '../src/actors/presence-runtime.js';
import { Residents } from '../src/actors/residents.js';
import { loadConfig } from '../src/config.js';
import { heartbeat } from '../src/domain/habitat.js';
import { noMetrics } from '../src/domain/metrics.js';
import { type Ctx, noServices, type Sql } from '../src/domain/ports.js';
import type { HeartbeatOutcome, PresenceService } from '../src/domain/presence.js';
import { createLogger } from '../src/log.js';
import { ONLINE_WINDOW_MS, presenceMachine } from '../src/machines/presence.js';
import { type BeatBatch, flushHeartbeats } from '../src/store/habitat.js';
import type { IdentityRow } from '../src/store/identities.js';
import { LocalBus } from '../src/transport/bus/local.js';

const N = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc --import tsx bench/presence.ts');

/** The naive runtime: one interpreted actor (and its own setTimeout) per resident. */
class NaiveResidents implements PresenceService {
  private readonly actors = new Map<number, Actor<typeof presenceMachine>>();
  private pending = new Map<number, number>();
  private readonly days = new Map<number, number>();
  heartbeat(id: number, at: Date): HeartbeatOutcome {
    let a = this.actors.get(id);
    if (!a) {
      a = createActor(presenceMachine).start();
      this.actors.set(id, a);
    }
    const before = a.getSnapshot().value;
    a.send({ type: 'HEARTBEAT' });
    this.pending.set(id, at.getTime());
    return { cameOnline: before !== 'online', onlineUntil: at.getTime() + ONLINE_WINDOW_MS };
  }
  async onlineCount() {
    let n = 0;
    for (const a of this.actors.values()) if (a.getSnapshot().value === 'online') n++;
    return n;
  }
  async isOnline(id: number) {
    return this.actors.get(id)?.getSnapshot().value === 'online';
  }
  creditedDay(id: number) {
    return this.days.get(id) ?? -1;
  }
  markCredited(id: number, day: number) {
    this.days.set(id, day);
  }
  /** The same coalesced write as the lean runtime's. */
  async flush() {
    const batch: BeatBatch = { ids: [], ats: [], notes: [] };
    for (const [id, t] of this.pending) {
      batch.ids.push(id);
      batch.ats.push(t);
      batch.notes.push(null);
    }
    this.pending = new Map();
    await flushHeartbeats(nullSql, batch);
  }
  stop() {
    for (const a of this.actors.values()) a.stop();
    this.actors.clear();
  }
}

// The flush writes one statement per batch; here the statement goes nowhere.
const nullSql = Object.assign(async () => [], { array: (x: unknown) => x }) as unknown as Sql;
let nowMs = Date.UTC(2026, 4, 1, 8, 0, 0);
const makeCtx = (): Ctx => ({
  sql: nullSql,
  config: loadConfig({ LOG_LEVEL: 'silent' }),
  log: createLogger('silent'),
  clock: { now: () => new Date(nowMs), nowMs: () => nowMs },
  bus: new LocalBus(),
  metrics: noMetrics,
  health: { database: async () => true, databaseSuspect: () => false, degraded: () => [] },
  secret: Buffer.alloc(32),
  publicUrl: () => 'http://127.0.0.1:8080',
  services: noServices(),
});
const day = Math.floor(nowMs / 86_400_000);
const members = Array.from(
  { length: N },
  (_, i) => ({ id: i + 1, state: 'resident', name: 'r', joined_at: new Date(0), last_heartbeat_at: null }) as unknown as IdentityRow,
);

const heap = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
};

interface Side {
  name: string;
  ctx: Ctx;
  service: PresenceService;
  bytes: number;
  rounds: number[];
}

/** Creates every resident's actor (first heartbeat; its day already credited) and weighs them. */
async function populate(name: string, service: PresenceService): Promise<Side> {
  const ctx = makeCtx();
  ctx.services.presence = service;
  const base = heap();
  for (const m of members) service.markCredited(m.id, day);
  for (const m of members) await heartbeat(ctx, m);
  await service.flush();
  return { name, ctx, service, bytes: (heap() - base) / N, rounds: [] };
}

async function round(side: Side): Promise<void> {
  const t0 = process.hrtime.bigint();
  for (const m of members) {
    // The same loop for both runtimes: await only what is a promise (the domain answers an
    // online resident's heartbeat synchronously).
    const r = heartbeat(side.ctx, m);
    if (r instanceof Promise) await r;
  }
  await side.service.flush();
  side.rounds.push(N / (Number(process.hrtime.bigint() - t0) / 1e9));
}

const naive = new NaiveResidents();
const sides = [
  await populate('lean (table + timer wheel)', new Residents(makeCtx())),
  await populate('naive (interpreted actor each)', naive),
];
// Rounds alternate between the runtimes so that load from other processes falls on both alike.
for (let r = 0; r < ROUNDS; r++) {
  nowMs += 60_000;
  for (const side of sides) await round(side);
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
const rows = [];
for (const side of sides) {
  const online = await side.service.onlineCount();
  if (online !== N) throw new Error(`${side.name}: ${online} online, expected ${N}`);
  rows.push({
    name: side.name,
    residents: N,
    heap_bytes_per_resident: Math.round(side.bytes),
    heartbeats_per_s_median: Math.round(median(side.rounds)),
    heartbeats_per_s_best: Math.round(Math.max(...side.rounds)),
  });
}
naive.stop();
const [a, b] = rows as [(typeof rows)[0], (typeof rows)[0]];

/** The runtimes alone (no domain function around them): PresenceRuntime vs actor.send. */
function runtimesAlone() {
  const rt = new PresenceRuntime();
  const actors = Array.from({ length: N }, () => createActor(presenceMachine).start());
  let t = nowMs;
  for (let i = 1; i <= N; i++) rt.heartbeat(i, t);
  let lean = 0;
  let naiveT = 0;
  for (let r = 0; r < ROUNDS; r++) {
    t += 60_000;
    let t0 = process.hrtime.bigint();
    for (let i = 1; i <= N; i++) rt.heartbeat(i, t);
    lean += Number(process.hrtime.bigint() - t0) / 1e9;
    t0 = process.hrtime.bigint();
    for (const x of actors) x.send({ type: 'HEARTBEAT' });
    naiveT += Number(process.hrtime.bigint() - t0) / 1e9;
  }
  for (const x of actors) x.stop();
  return { lean_per_s: Math.round((N * ROUNDS) / lean), naive_per_s: Math.round((N * ROUNDS) / naiveT) };
}
const alone = runtimesAlone();

const ratio = { heap: b.heap_bytes_per_resident / a.heap_bytes_per_resident, rate: a.heartbeats_per_s_median / b.heartbeats_per_s_median };
console.log(`presence: ${N} residents, ${ROUNDS} alternating rounds of heartbeats through habitat.heartbeat (node ${process.version})`);
console.table(rows);
console.log(`lean vs naive: ${ratio.heap.toFixed(1)}x less heap per resident, ${ratio.rate.toFixed(1)}x the heartbeat rate (medians)`);
const aloneRatio = alone.lean_per_s / alone.naive_per_s;
console.log(`runtimes alone: lean ${alone.lean_per_s}/s, naive actor.send ${alone.naive_per_s}/s, ${aloneRatio.toFixed(1)}x`);
const met = (ok: boolean) => (ok ? 'met' : 'MISSED');
console.log(`targets: <= 1024 B/resident ${met(a.heap_bytes_per_resident <= 1024)}; >= 10x rate ${met(ratio.rate >= 10)}`);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('./results/presence.json', import.meta.url),
  JSON.stringify(
    { at: new Date().toISOString(), node: process.version, rounds: ROUNDS, lean: a, naive: b, ratio, runtimes_alone: alone },
    null,
    2,
  ),
);
process.exit(0);
