// The node's view of the open chat: the recent messages in memory (so reads skip the database)
// and a sequencer that hands messages on strictly in seq order, with no gap and no repeat,
// whichever node posted them and in whatever order the bus delivered them (docs/stream.md).
//
// Why it is sound: the room settles nothing above the chat's watermark (src/store/chat.ts): every
// seq at or below it is committed or will never exist, though groups commit in any order. A
// message that arrives ahead of its predecessors (a lower group of this node or another still in
// its commit, a message the bus lost, a rolled-back seq) makes the room wait, in the database, for
// the watermark to pass it (the groups in flight below it committed or rolled back), then fill the
// hole from the rows; and when a cross-node bus comes back after an outage the node settles up to
// the watermark.
import * as store from '../store/chat.js';
import { type ChatMessage, toMessage } from './chat-record.js';
import { BUS_RESUMED_TOPIC, type BusMessage, type ChatPages, type Ctx } from './ports.js';

/** How many recent messages each node keeps (two full pages of 100 and then some). */
export const CHAT_CACHE = 1000;
const FILL_BATCH = 10_000;

export class ChatRoom implements ChatPages {
  /** Last seq handed on; every seq <= head is settled here. */
  private head = 0;
  /** The cache holds every visible message with floor < seq <= head. */
  private floor = 0;
  private cache: ChatMessage[] = [];
  private readonly pending = new Map<number, ChatMessage>();
  private readonly listeners = new Set<(m: ChatMessage) => void>();
  private early: ChatMessage[] | null = [];
  private lock: Promise<void> = Promise.resolve();
  private busy = 0;
  private closed = false;
  private readonly unsubscribe: (() => void)[] = [];
  version = 0;

  constructor(private readonly ctx: Ctx) {}

  async start(): Promise<void> {
    // Subscribe before reading, so nothing committed in between is missed (early arrivals wait).
    this.unsubscribe.push(this.ctx.bus.subscribe('chat', (m) => this.arrive(m.data as ChatMessage)));
    this.unsubscribe.push(this.ctx.bus.subscribe(CHAT_HIDDEN_TOPIC, (m) => this.forget(String(m.id))));
    // The bus lost what other nodes sent while it was down; the last of those shows no gap until a
    // later message arrives (which may be long), so settle up to the database's head now.
    this.unsubscribe.push(
      this.ctx.bus.subscribe(BUS_RESUMED_TOPIC, () => {
        if (this.early === null && !this.closed) void this.run(() => this.catchUp());
      }),
    );
    this.head = await store.watermark(this.ctx.sql);
    const rows = await store.listNewest(this.ctx.sql, CHAT_CACHE, this.head + 1);
    this.cache = rows.reverse().map(toMessage);
    this.floor = rows.length < CHAT_CACHE ? 0 : (rows[0]?.seq ?? 1) - 1;
    const early = this.early ?? [];
    this.early = null;
    for (const m of early) this.arrive(m);
  }

  close(): void {
    this.closed = true;
    for (const u of this.unsubscribe) u();
    this.listeners.clear();
  }

  /** Ordered messages as this node settles them. */
  listen(handler: (m: ChatMessage) => void): () => void {
    this.listeners.add(handler);
    return () => this.listeners.delete(handler);
  }

  get lastSeq(): number {
    return this.head;
  }

  /**
   * A newest-first page answered from memory, or null when memory does not cover it.
   * Returns the page oldest first and whether older messages exist.
   */
  page(limit: number, beforeSeq: number | null): { messages: ChatMessage[]; more: boolean } | null {
    const upper = beforeSeq ?? Number.POSITIVE_INFINITY;
    let end = this.cache.length;
    while (end > 0 && (this.cache[end - 1] as ChatMessage).seq >= upper) end--;
    if (end > limit) return { messages: this.cache.slice(end - limit, end), more: true };
    if (this.floor === 0) return { messages: this.cache.slice(0, end), more: false };
    return null;
  }

  /** Messages after `since` up to this node's head, oldest first (the stream's replay). */
  async replay(since: number, limit: number): Promise<ChatMessage[]> {
    // A client coming from a node that is ahead: settle up to the database's head first, so
    // what it already saw is not sent again live.
    if (since > this.head) await this.run(() => this.catchUp());
    const head = this.head;
    if (since >= this.floor) return this.cache.filter((m) => m.seq > since).slice(0, limit);
    const rows = await store.listAfter(this.ctx.sql, since, limit, head + 1);
    return rows.map(toMessage);
  }

  private arrive(m: ChatMessage): void {
    if (this.early) {
      this.early.push(m);
      return;
    }
    if (this.closed || m.seq <= this.head) return;
    this.pending.set(m.seq, m);
    this.pump();
  }

  private pump(): void {
    if (this.busy > 0 || this.closed) return;
    for (let next = this.pending.get(this.head + 1); next; next = this.pending.get(this.head + 1)) {
      this.pending.delete(next.seq);
      this.deliver(next);
    }
    for (const s of this.pending.keys()) if (s <= this.head) this.pending.delete(s);
    if (this.pending.size === 0) return;
    const first = Math.min(...this.pending.keys());
    void this.run(() => this.fill(first));
  }

  private run(task: () => Promise<void>): Promise<void> {
    this.busy++;
    const p = this.lock.then(task).finally(() => {
      this.busy--;
      this.pump();
    });
    this.lock = p.catch(() => {});
    return p;
  }

  /** Settles every seq below `upTo` from the database (a hole in what the bus delivered), once the
   * watermark has passed it: the groups in flight below it committed or rolled back. */
  private async fill(upTo: number): Promise<void> {
    try {
      const settled = Math.min(upTo - 1, await store.watermarkAt(this.ctx.sql, upTo - 1));
      const rows = await store.listAfter(this.ctx.sql, this.head, FILL_BATCH, settled + 1);
      for (const r of rows) if (r.seq > this.head) this.deliver(toMessage(r));
      if (rows.length < FILL_BATCH) this.head = Math.max(this.head, settled);
      // Only a seq not drawn yet stays below upTo (a message this room holds is committed, so every
      // seq under it was drawn): not expected; retried after a pause, not at once.
      if (settled < upTo - 1) throw new Error(`chat watermark ${settled} below a committed message's seq ${upTo}`);
    } catch (err) {
      this.ctx.log.warn({ err }, 'chat: could not fill a gap from the database; retrying');
      await new Promise((ok) => setTimeout(ok, 250));
    }
  }

  private async catchUp(): Promise<void> {
    const top = await store.watermark(this.ctx.sql);
    if (top > this.head) await this.fill(top + 1);
  }

  private deliver(m: ChatMessage): void {
    this.version++;
    this.head = m.seq;
    this.cache.push(m);
    if (this.cache.length > CHAT_CACHE) this.floor = (this.cache.shift() as ChatMessage).seq;
    for (const l of this.listeners) {
      try {
        l(m);
      } catch (err) {
        this.ctx.log.error({ err }, 'chat listener failed');
      }
    }
  }

  private forget(id: string): void {
    this.version++;
    const i = this.cache.findIndex((m) => m.id === id);
    if (i >= 0) this.cache.splice(i, 1);
  }
}

/** Topic on which a hidden message is announced to every node's cache (operator moderation). */
export const CHAT_HIDDEN_TOPIC = 'chat.hidden';

/** Bus shape of a settled message on the `chat` topic: the event id is the seq. */
export const chatEvent = (m: ChatMessage): BusMessage => ({ topic: 'chat', id: String(m.seq), data: m });
