// Cross-node bus over Redis pub/sub (STYLE.md 5; soketi's redis adapter): one publisher and one
// subscriber connection (a subscribed connection can issue nothing else), every message carries
// the publishing node's id, and a node drops its own echo because it already delivered locally.
import { Redis } from 'ioredis';
import { BUS_RESUMED_TOPIC, type Bus, type BusMessage } from '../../domain/ports.js';
import type { Logger } from '../../log.js';
import { LocalBus } from './local.js';

interface Wire {
  n: string;
  t: string;
  i: string;
  d: unknown;
}

/** Called on every bus fault (a connection error, a failed publish, an unreadable or undeliverable
 * message), so /metrics can count them (commons_bus_errors_total). */
export type BusErrorHook = () => void;

export class RedisBus implements Bus {
  private readonly local: LocalBus;
  get nodeId(): string {
    return this.local.nodeId;
  }
  private readonly channel: string;
  private closed = false;
  private lossLogged = false;

  private constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    prefix: string,
    private readonly log: Logger,
    private readonly onError: BusErrorHook,
  ) {
    this.local = new LocalBus((err, topic) => {
      onError();
      log.error({ err, topic }, 'bus subscriber failed');
    });
    // One channel for every topic: each node listens to all stream topics anyway, and a single
    // SUBSCRIBE can be awaited once at start, so a subscription is live as soon as it returns.
    this.channel = `${prefix}bus`;
  }

  /** Connects both connections and resolves once the subscription is live. */
  static async connect(url: string, prefix: string, log: Logger, onError: BusErrorHook = () => {}): Promise<RedisBus> {
    const opts = { lazyConnect: true, maxRetriesPerRequest: 3, enableAutoPipelining: true };
    const pub = new Redis(url, opts);
    const sub = new Redis(url, { ...opts, enableAutoPipelining: false });
    for (const c of [pub, sub]) {
      c.on('error', (err: Error) => {
        onError();
        log.warn({ err: err.message }, 'redis bus connection error');
      });
    }
    await Promise.all([pub.connect(), sub.connect()]);
    const bus = new RedisBus(pub, sub, prefix, log, onError);
    sub.on('messageBuffer', (_ch: Buffer, raw: Buffer) => bus.receive(raw));
    await sub.subscribe(bus.channel);
    // Each later 'ready' is a reconnect: once the subscription is confirmed live again (a SUBSCRIBE
    // of our own, answered after ioredis's resubscription), this node's listeners are told.
    sub.on('ready', () => {
      sub.subscribe(bus.channel).then(
        () => bus.resumed(),
        () => {},
      );
    });
    return bus;
  }

  private resumed(): void {
    if (this.closed) return;
    this.log.info('redis bus: live again; listeners catch up from the database');
    this.local.deliver({ topic: BUS_RESUMED_TOPIC, id: String(Date.now()), data: null });
  }

  /** Never fails and never waits for Redis (DECISIONS.md "Idempotent writes"): a write publishes
   * after its commit, and what Redis loses the other nodes fill from the database. Local
   * subscribers get the message synchronously, as with the in-process bus; other nodes via Redis
   * when it is up (sent in order on the one publishing connection), and a send Redis refuses or
   * loses is counted (commons_bus_errors_total) and dropped. */
  async publish(msg: BusMessage): Promise<void> {
    if (this.closed) return;
    this.local.deliver(msg);
    if (this.pub.status !== 'ready') {
      this.dropped();
      return;
    }
    const wire: Wire = { n: this.nodeId, t: msg.topic, i: msg.id, d: msg.data };
    this.pub.publish(this.channel, JSON.stringify(wire)).catch(() => this.dropped());
  }

  /** A cross-node send lost to a Redis outage: counted, and logged once per outage. */
  private dropped(): void {
    this.onError();
    if (this.lossLogged) return;
    this.lossLogged = true;
    this.log.warn('redis bus: down, cross-node messages are dropped (each node fills gaps from the database)');
    this.pub.once('ready', () => {
      this.lossLogged = false;
    });
  }

  subscribe(topic: string, handler: (msg: BusMessage) => void): () => void {
    return this.local.subscribe(topic, handler);
  }

  private receive(raw: Buffer): void {
    let w: Wire;
    try {
      w = JSON.parse(raw.toString('utf8')) as Wire;
    } catch {
      this.onError();
      this.log.warn('redis bus: dropped a malformed message');
      return;
    }
    if (w.n === this.nodeId) return;
    this.local.deliver({ topic: w.t, id: w.i, data: w.d });
  }

  /** Both connections answer (the readiness report names Redis as degraded otherwise). */
  get connected(): boolean {
    return this.pub.status === 'ready' && this.sub.status === 'ready';
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.local.close();
    await Promise.allSettled([this.sub.quit(), this.pub.quit()]);
  }
}
