// The lean resident-actor runtime (STYLE.md 8): one actor per resident, each a state
// index and one timer (its expiry) in typed arrays, stepped through the presence machine's
// compiled transition table. All timers share one wheel of 1-second buckets driven by a single
// tick, instead of a setTimeout per resident. Measured in bench/presence.ts.
import { presenceMachine } from '../machines/presence.js';
import { compileMachine, type MachineTable } from './machine-table.js';

export const PRESENCE_TABLE: MachineTable = compileMachine(presenceMachine, ['HEARTBEAT']);
const HEARTBEAT = PRESENCE_TABLE.eventIndex('HEARTBEAT');
const ONLINE = PRESENCE_TABLE.stateIndex('online');
const BUCKET_MS = 1000;

export type Change = (residentId: number, state: string, at: number) => void;

export class PresenceRuntime {
  private readonly table = PRESENCE_TABLE;
  private readonly slotOf = new Map<number, number>();
  private ids = new Float64Array(0);
  private state = new Uint8Array(0);
  /** Timer: when it fires (ms since epoch; 0 = no timer) and which event it raises. */
  private expiry = new Float64Array(0);
  private timerEvent = new Uint8Array(0);
  /** The wheel bucket a slot currently sits in (0 = none); stale entries elsewhere are skipped. */
  private due = new Float64Array(0);
  /** UTC day (days since epoch) of the last heartbeat credited with points. */
  private dayCredited = new Int32Array(0);
  /** Last heartbeat not yet written to PostgreSQL (0 = none), and the slots that have one: the
   * coalesced write collects these instead of keeping a map beside the actors. */
  private pendingAt = new Float64Array(0);
  private dirty: number[] = [];
  private size = 0;
  private online = 0;
  private readonly wheel = new Map<number, number[]>();
  /** The first bucket the next tick will process (0 before the first tick: from the oldest). */
  private cursor = 0;

  constructor(private readonly onChange: Change = () => {}) {}

  get residents(): number {
    return this.size;
  }

  get onlineCount(): number {
    return this.online;
  }

  /** Sends HEARTBEAT to the resident's actor (created on first use); true when it came online. */
  heartbeat(id: number, now: number): boolean {
    const slot = this.slotOf.get(id) ?? this.create(id);
    const before = this.state[slot] as number;
    this.send(slot, HEARTBEAT, now);
    this.pend(slot, now);
    return before !== ONLINE && this.state[slot] === ONLINE;
  }

  /** The heartbeats to write (each resident's latest), taken out of the actors. */
  takePending(): { ids: number[]; ats: number[] } {
    const ids: number[] = [];
    const ats: number[] = [];
    for (const slot of this.dirty) {
      ids.push(this.ids[slot] as number);
      ats.push(this.pendingAt[slot] as number);
      this.pendingAt[slot] = 0;
    }
    this.dirty = [];
    return { ids, ats };
  }

  /** Puts back a heartbeat whose write failed, unless a newer one is already pending. */
  restorePending(id: number, at: number): void {
    const slot = this.slotOf.get(id);
    if (slot !== undefined && this.pendingAt[slot] === 0) this.pend(slot, at);
  }

  private pend(slot: number, at: number): void {
    if (this.pendingAt[slot] === 0) this.dirty.push(slot);
    this.pendingAt[slot] = at;
  }

  /** Restores an actor after a restart: online until `until` if that is still ahead. */
  restore(id: number, lastHeartbeat: number, now: number): void {
    const slot = this.slotOf.get(id) ?? this.create(id);
    this.send(slot, HEARTBEAT, lastHeartbeat, false);
    if ((this.expiry[slot] as number) <= now) this.fire(slot, now, false);
  }

  isOnline(id: number): boolean {
    const slot = this.slotOf.get(id);
    return slot !== undefined && this.state[slot] === ONLINE;
  }

  onlineUntil(id: number): number | null {
    const slot = this.slotOf.get(id);
    if (slot === undefined || this.state[slot] !== ONLINE) return null;
    return this.expiry[slot] as number;
  }

  creditedDay(id: number): number {
    const slot = this.slotOf.get(id);
    return slot === undefined ? -1 : (this.dayCredited[slot] as number);
  }

  markCredited(id: number, day: number): void {
    const slot = this.slotOf.get(id) ?? this.create(id);
    this.dayCredited[slot] = day;
  }

  /** Fires every timer due at `now` (the actor's single shared tick). */
  tick(now: number): void {
    const last = Math.floor(now / BUCKET_MS);
    const keys =
      last - this.cursor > this.wheel.size
        ? [...this.wheel.keys()].filter((k) => k <= last).sort((a, b) => a - b)
        : range(this.cursor, last);
    // The current bucket is examined again next tick: it may hold timers later in this second.
    this.cursor = last;
    for (const b of keys) {
      const list = this.wheel.get(b);
      if (!list) continue;
      this.wheel.delete(b);
      for (const slot of list) {
        if (this.due[slot] !== b) continue;
        this.due[slot] = 0;
        const at = this.expiry[slot] as number;
        if (at === 0) continue;
        if (at > now) this.schedule(slot, at);
        else this.fire(slot, at, true);
      }
    }
  }

  private fire(slot: number, at: number, announce: boolean): void {
    this.send(slot, this.timerEvent[slot] as number, at, announce);
  }

  private send(slot: number, event: number, now: number, announce = true): void {
    const from = this.state[slot] as number;
    const step = this.table.steps[from]?.[event];
    if (!step) return;
    this.state[slot] = step.next;
    const t = step.timer;
    if (t.kind === 'cancel') this.expiry[slot] = 0;
    else if (t.kind === 'set') {
      this.timerEvent[slot] = t.event;
      this.expiry[slot] = now + t.delay;
      this.schedule(slot, now + t.delay);
    }
    if (from === step.next) return;
    this.online += step.next === ONLINE ? 1 : from === ONLINE ? -1 : 0;
    if (announce) this.onChange(this.ids[slot] as number, this.table.states[step.next] as string, now);
  }

  /** Keeps the slot in the bucket of its expiry, or an earlier one (checked again on firing). */
  private schedule(slot: number, at: number): void {
    // Never behind the tick's cursor, so a timer cannot land in an already-processed bucket.
    const b = Math.max(Math.floor(at / BUCKET_MS), this.cursor);
    const cur = this.due[slot] as number;
    if (cur !== 0 && cur <= b) return;
    this.due[slot] = b;
    let list = this.wheel.get(b);
    if (!list) {
      list = [];
      this.wheel.set(b, list);
    }
    list.push(slot);
  }

  private create(id: number): number {
    if (this.size === this.ids.length) this.grow(Math.max(1024, this.size * 2));
    const slot = this.size++;
    this.ids[slot] = id;
    this.state[slot] = this.table.initial;
    this.dayCredited[slot] = -1;
    this.slotOf.set(id, slot);
    return slot;
  }

  private grow(n: number): void {
    const g = <T extends Float64Array | Uint8Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.ids = g(this.ids, (k) => new Float64Array(k));
    this.state = g(this.state, (k) => new Uint8Array(k));
    this.expiry = g(this.expiry, (k) => new Float64Array(k));
    this.timerEvent = g(this.timerEvent, (k) => new Uint8Array(k));
    this.due = g(this.due, (k) => new Float64Array(k));
    this.dayCredited = g(this.dayCredited, (k) => new Int32Array(k));
    this.pendingAt = g(this.pendingAt, (k) => new Float64Array(k));
  }
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let b = from; b <= to; b++) out.push(b);
  return out;
}
