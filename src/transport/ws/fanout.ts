// Fan-out (DECISIONS.md "Real-time stream (WebSocket)"; DESIGN.md "Fan-out publishes what is ready together"):
// each topic's events are encoded once per encoding that has subscribers and published once into a
// uWS topic, which writes to every subscribed socket in native code. uWS coalesces everything
// published between two of its loop drains into one write per socket, so the cost of a delivery
// is set by how many events go out together, not by how many there are.
//
// Adaptive batching: an event that arrives when the fan-out is idle goes out at once (no added
// delay), and so does every event that arrives in the same event-loop turn, before uWS has
// written the burst (a group commit settles its posts together: they go out in one write per
// socket, not the first alone and the rest a turn later). After a burst, events that arrive in a
// later turn within the hold wait and go out together, in arrival order, when the hold ends. The
// hold is what the last burst cost to write (measured from its publish to the next turn of the
// event loop, after uWS has written it to every socket), between HOLD_MS and MAX_HOLD_MS: a topic
// with few subscribers batches little and waits little, one with thousands batches whatever
// arrives while a burst would take to write, so the fan-out never needs more than about half the
// event loop. A slow socket only grows its own buffer.
import type { TemplatedApp } from 'uWebSockets.js';
import type { Bus, BusMessage } from '../../domain/ports.js';
import { byteLength, ENCODINGS, encode } from './codec.js';
import { eventFrame, MAX_FRAME_BYTES, tooLargeFrame } from './frames.js';
import type { Session } from './session.js';
import { uwsTopic } from './session.js';
import { type FeedRegistry, SESSION_TOPICS, TOPICS, type Topic, type TopicFeed } from './topics.js';

/** The shortest hold after a burst. */
export const HOLD_MS = 2;
/** The longest an event waits for company under load (the stream's p99 budget is in tens of ms). */
export const MAX_HOLD_MS = 25;

export class Fanout {
  private readonly stops: (() => void)[] = [];
  /** Sessions replaying a topic: events published meanwhile are kept for them until they join the uWS topic. */
  private readonly replayers = new Map<string, Set<Session>>();
  /** Waiting events with the time they arrived. */
  private queue: [string, BusMessage, number][] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastFlush = 0;
  private hold = HOLD_MS;
  /** A burst began in this event-loop turn and uWS has not written it yet (until setImmediate). */
  private turnOpen = false;
  /** Events published, per encoding (a metric and a test hook). */
  published = 0;
  /** Publish bursts: published / bursts is the batching achieved. */
  bursts = 0;

  constructor(
    private readonly app: TemplatedApp,
    bus: Bus,
    private readonly feeds: FeedRegistry,
    /** Told how long each event waited before its burst, in seconds (a metric). */
    private readonly waited: (seconds: number) => void = () => {},
  ) {
    for (const topic of TOPICS) {
      if (SESSION_TOPICS.has(topic)) continue;
      const feed = feeds[topic];
      const handler = (e: BusMessage) => this.broadcast(topic, e);
      this.stops.push(feed?.live ? feed.live(handler) : bus.subscribe(topic, handler));
    }
  }

  /** Whether the next event would go out at once (nothing waiting, no burst within HOLD_MS). */
  get idle(): boolean {
    return this.queue.length === 0 && !this.timer && performance.now() - this.lastFlush >= this.hold;
  }

  feed(topic: Topic): TopicFeed | undefined {
    return this.feeds[topic];
  }

  broadcast(topic: string, e: BusMessage): void {
    // Idle, or a burst began in this turn and nothing waits: out now (uWS writes a turn's
    // publishes to each socket together, so joining this turn's burst costs no write of its own).
    if (this.idle || (this.turnOpen && this.queue.length === 0)) {
      this.began();
      this.waited(0);
      this.publish(topic, e);
      return;
    }
    this.queue.push([topic, e, performance.now()]);
    this.timer ??= setTimeout(() => this.flush(), Math.max(1, this.lastFlush + this.hold - performance.now()));
  }

  /** Starts a burst, unless this turn has one (uWS writes a turn's publishes as one burst), and
   * measures what it costs to write (uWS writes at the end of this loop turn). */
  private began(): void {
    if (this.turnOpen) return;
    const t = performance.now();
    this.lastFlush = t;
    this.bursts++;
    this.turnOpen = true;
    setImmediate(() => {
      this.turnOpen = false;
      this.hold = Math.min(MAX_HOLD_MS, Math.max(HOLD_MS, performance.now() - t));
    });
  }

  /**
   * Publishes every waiting event now. A session about to join a topic after a replay calls this
   * first, so an event that is settled (and so may be in the replay) but not yet published lands
   * in the session's held list, where the cursor drops it, instead of arriving twice.
   */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.queue.length === 0) return;
    const q = this.queue;
    this.queue = [];
    this.began();
    const now = performance.now();
    for (const [topic, e, at] of q) {
      this.waited((now - at) / 1000);
      this.publish(topic, e);
    }
  }

  private publish(topic: string, e: BusMessage): void {
    const waiting = this.replayers.get(topic);
    if (waiting) for (const s of waiting) s.replaying?.get(topic)?.push(e);
    let frame: unknown;
    for (const enc of ENCODINGS) {
      const t = uwsTopic(topic, enc);
      if (this.app.numSubscribers(t) === 0) continue;
      frame ??= eventFrame(topic, e.id, e.data);
      let payload = encode(frame, enc);
      if (byteLength(payload) > MAX_FRAME_BYTES) payload = encode(tooLargeFrame(topic, e.id), enc);
      this.app.publish(t, payload, enc === 'msgpack');
      this.published++;
    }
  }

  watch(topic: string, s: Session): void {
    let set = this.replayers.get(topic);
    if (!set) {
      set = new Set();
      this.replayers.set(topic, set);
    }
    set.add(s);
  }

  unwatch(topic: string, s: Session): void {
    const set = this.replayers.get(topic);
    set?.delete(s);
    if (set?.size === 0) this.replayers.delete(topic);
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue = [];
    for (const stop of this.stops) stop();
    this.replayers.clear();
  }
}
