// Fan-out (issue 3): each topic's events are encoded once per encoding that has subscribers and
// published once into a uWS topic, which writes to every subscribed socket in native code. A slow
// socket only grows its own buffer; nothing waits for it.
import type { TemplatedApp } from 'uWebSockets.js';
import type { Bus, BusMessage } from '../../domain/ports.js';
import { byteLength, ENCODINGS, encode } from './codec.js';
import { eventFrame, MAX_FRAME_BYTES, tooLargeFrame } from './frames.js';
import type { Session } from './session.js';
import { uwsTopic } from './session.js';
import { type FeedRegistry, TOPICS, type Topic, type TopicFeed } from './topics.js';

export class Fanout {
  private readonly stops: (() => void)[] = [];
  /** Sessions replaying a topic: live events are kept for them until they join the uWS topic. */
  private readonly replayers = new Map<string, Set<Session>>();
  published = 0;

  constructor(
    private readonly app: TemplatedApp,
    bus: Bus,
    private readonly feeds: FeedRegistry,
  ) {
    for (const topic of TOPICS) {
      const feed = feeds[topic];
      const handler = (e: BusMessage) => this.broadcast(topic, e);
      this.stops.push(feed?.live ? feed.live(handler) : bus.subscribe(topic, handler));
    }
  }

  feed(topic: Topic): TopicFeed | undefined {
    return this.feeds[topic];
  }

  broadcast(topic: string, e: BusMessage): void {
    const waiting = this.replayers.get(topic);
    if (waiting) for (const s of waiting) s.replaying.get(topic)?.push(e);
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
    for (const stop of this.stops) stop();
    this.replayers.clear();
  }
}
