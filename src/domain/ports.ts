// What the domain needs from the outside world, as small interfaces. Implementations live in
// src/store (SQL) and src/transport (bus); the domain never imports them.
import type { Sql } from 'postgres';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Metrics } from './metrics.js';

export type { Sql };

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A message on the bus: a topic, an event id (monotonic per topic when durable), and data. */
export interface BusMessage {
  topic: string;
  id: string;
  data: unknown;
}

/** Cross-node publish/subscribe (STYLE.md 5): in-process or Redis. */
export interface Bus {
  readonly nodeId: string;
  publish(msg: BusMessage): Promise<void>;
  subscribe(topic: string, handler: (msg: BusMessage) => void): () => void;
  close(): Promise<void>;
}

export interface Ctx {
  sql: Sql;
  config: Config;
  log: Logger;
  clock: Clock;
  bus: Bus;
  /** Server secret (32 bytes) for guest-token signatures; generated once and kept in the database. */
  secret: Buffer;
  /** Base URL every emitted link is built on. */
  publicUrl: () => string;
  /** Counters and gauges for /metrics (src/domain/metrics.ts). */
  metrics: Metrics;
}
