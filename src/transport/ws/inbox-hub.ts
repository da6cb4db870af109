// The stream topic `inbox` (DECISIONS.md "Inbox", "Real-time stream"): each session receives only
// its own member's items. A member has few sessions, so items are sent to each session directly
// (no uWS topic), each session keeping a cursor: item ids are dense per member (drawn under a
// row lock, sql/016_inbox.sql), so an id past cursor + 1 is a gap (a publish lost, or one still
// on its way from another node) that is filled from the database at once, and an id at or below
// the cursor is a repeat that is dropped. Replay and live delivery run on one chain per session:
// no gap, no duplicate, in id order.
import * as inbox from '../../domain/inbox.js';
import type { BusMessage, Ctx } from '../../domain/ports.js';
import { ackFrame, eventFrame, type Ref } from './frames.js';
import { type Socket, send } from './session.js';

/** The most items one `subscribe {since}` replays (as for every topic, docs/stream.md). */
const REPLAY_MAX = 2000;
const BATCH = 200;
/** How often the hub compares its sessions' cursors with the database: an item no bus message
 * announced (a badge, written by a trigger; a publish lost while Redis was down) arrives within it
 * even when no later item comes to reveal the gap. */
const SWEEP_MS = 5000;

interface Sub {
  ws: Socket;
  owner: number;
  cursor: bigint;
  chain: Promise<void>;
}

export class InboxHub {
  private readonly byOwner = new Map<number, Set<Sub>>();
  private readonly bySocket = new Map<Socket, Sub>();
  private readonly stop: () => void;
  private readonly sweep: NodeJS.Timeout;
  private sweeping = false;

  constructor(private readonly ctx: Ctx) {
    this.stop = ctx.bus.subscribe(inbox.INBOX_TOPIC, (e) => this.live(e));
    this.sweep = setInterval(() => void this.fillGaps(), SWEEP_MS);
    this.sweep.unref();
  }

  isSubscribed(ws: Socket): boolean {
    return this.bySocket.has(ws);
  }

  /** Joins the session to its member's items; with `since`, what it missed first. */
  async subscribe(ws: Socket, owner: number, r: Ref, since: string | undefined): Promise<void> {
    if (this.bySocket.has(ws)) return send(ws, ackFrame(r, { topic: 'inbox', subscribed: true, replayed: 0 }));
    // Registered before any await, so live items arriving meanwhile queue on the session's chain
    // behind the start (and a second subscribe is a repeat).
    const sub: Sub = { ws, owner, cursor: 0n, chain: Promise.resolve() };
    this.bySocket.set(ws, sub);
    let set = this.byOwner.get(owner);
    if (!set) {
      set = new Set();
      this.byOwner.set(owner, set);
    }
    set.add(sub);
    sub.chain = sub.chain.then(async () => {
      if (since === undefined) {
        sub.cursor = await this.head(owner);
        send(ws, ackFrame(r, { topic: 'inbox', subscribed: true, replayed: 0, replay: 'none' }));
        return;
      }
      sub.cursor = BigInt(since);
      const replayed = await this.catchUp(sub, null, REPLAY_MAX);
      const more = replayed >= REPLAY_MAX && (await inbox.ownedAfter(this.ctx, owner, sub.cursor, 1)).length > 0;
      const data: Record<string, unknown> = { topic: 'inbox', subscribed: true, replayed, last_id: sub.cursor.toString() };
      if (more) {
        Object.assign(data, { replay: 'truncated', rest: `/api/v1/inbox?since=${sub.cursor}` });
        // The rest is read over REST; live items continue from the newest.
        sub.cursor = await this.head(owner);
      }
      send(ws, ackFrame(r, data));
    });
    try {
      await sub.chain;
    } catch (err) {
      // The start failed (the database): the session is not left half-subscribed.
      this.unsubscribe(ws);
      throw err;
    }
  }

  unsubscribe(ws: Socket): boolean {
    const sub = this.bySocket.get(ws);
    if (!sub) return false;
    this.bySocket.delete(ws);
    const set = this.byOwner.get(sub.owner);
    set?.delete(sub);
    if (set?.size === 0) this.byOwner.delete(sub.owner);
    return true;
  }

  close(): void {
    this.stop();
    clearInterval(this.sweep);
    this.byOwner.clear();
    this.bySocket.clear();
  }

  private live(e: BusMessage): void {
    const item = e.data as inbox.OwnedItem;
    const set = this.byOwner.get(item.owner);
    if (!set) return;
    const id = BigInt(item.id);
    for (const sub of set) {
      sub.chain = sub.chain
        .then(async () => {
          if (id <= sub.cursor) return;
          if (id > sub.cursor + 1n) await this.catchUp(sub, id - 1n, REPLAY_MAX);
          // Normally id is now cursor + 1; an item the database no longer keeps is not waited for.
          if (id > sub.cursor) this.emit(sub, item);
        })
        .catch((err: unknown) => this.ctx.log.warn({ err }, 'inbox: delivering to a stream session failed'));
    }
  }

  /** Catches up every session whose member has items past its cursor (one query for all). */
  private async fillGaps(): Promise<void> {
    if (this.sweeping || this.byOwner.size === 0) return;
    this.sweeping = true;
    try {
      const last = await inbox.lastIds(this.ctx, [...this.byOwner.keys()]);
      for (const [owner, set] of this.byOwner) {
        const head = last.get(owner);
        if (head === undefined) continue;
        for (const sub of set) {
          if (sub.cursor >= head) continue;
          sub.chain = sub.chain
            .then(async () => {
              if (sub.cursor < head) await this.catchUp(sub, head, REPLAY_MAX);
            })
            .catch((err: unknown) => this.ctx.log.warn({ err }, 'inbox: filling a stream session failed'));
        }
      }
    } catch (err) {
      this.ctx.log.warn({ err }, 'inbox: the gap sweep failed; the next one retries');
    } finally {
      this.sweeping = false;
    }
  }

  /** Sends items after the cursor from the database, up to `upTo` (null: all), at most `max`. */
  private async catchUp(sub: Sub, upTo: bigint | null, max: number): Promise<number> {
    let sent = 0;
    while (sent < max && this.bySocket.get(sub.ws) === sub) {
      const batch = await inbox.ownedAfter(this.ctx, sub.owner, sub.cursor, Math.min(BATCH, max - sent));
      for (const item of batch) {
        if (upTo !== null && BigInt(item.id) > upTo) return sent;
        this.emit(sub, item);
        sent++;
      }
      if (batch.length < BATCH) break;
    }
    return sent;
  }

  private emit(sub: Sub, item: inbox.OwnedItem): void {
    if (this.bySocket.get(sub.ws) !== sub) return;
    const { owner: _, ...data } = item;
    send(sub.ws, eventFrame('inbox', item.id, { ...data, read: false }));
    sub.cursor = BigInt(item.id);
  }

  private async head(owner: number): Promise<bigint> {
    return inbox.lastId(this.ctx, owner);
  }
}
