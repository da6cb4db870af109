// In-process bus: the embedded default, one node.
import { randomUUID } from 'node:crypto';
import type { Bus, BusMessage } from '../../domain/ports.js';

export class LocalBus implements Bus {
  readonly nodeId = randomUUID();
  private readonly handlers = new Map<string, Set<(m: BusMessage) => void>>();

  /** A failing subscriber is reported here and never stops delivery to the others. */
  constructor(private readonly onError: (err: unknown, topic: string) => void = () => {}) {}

  async publish(msg: BusMessage): Promise<void> {
    this.deliver(msg);
  }

  /** Delivers to this node's subscribers (also used by the Redis bus for remote messages). */
  deliver(msg: BusMessage): void {
    const set = this.handlers.get(msg.topic);
    if (!set) return;
    for (const h of set) {
      try {
        h(msg);
      } catch (err) {
        this.onError(err, msg.topic);
      }
    }
  }

  subscribe(topic: string, handler: (msg: BusMessage) => void): () => void {
    let set = this.handlers.get(topic);
    if (!set) {
      set = new Set();
      this.handlers.set(topic, set);
    }
    set.add(handler);
    return () => {
      set.delete(handler);
      if (set.size === 0) this.handlers.delete(topic);
    };
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
