// What the domain needs from the outside world, as small interfaces. Implementations live in
// src/store (SQL) and src/transport (bus); the domain never imports them.

import type { Sql } from 'postgres';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { NewChatRow, StoredChat } from '../store/chat.js';
import type { IdentityRow } from '../store/identities.js';
import type { NewMemory, PutResult } from '../store/memory.js';
import type { ChatPages } from './chat-room.js';
import type { Metrics } from './metrics.js';
import type { PresenceService } from './presence.js';
import { VersionedMemo } from './versioned-memo.js';

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
  /** Delivers to this node's subscribers at once and sends to the others when it can. Never
   * rejects and never waits on Redis: a write publishes after its commit, and a message the bus
   * loses is filled from the database (DECISIONS.md "Idempotent writes"). */
  publish(msg: BusMessage): Promise<void>;
  subscribe(topic: string, handler: (msg: BusMessage) => void): () => void;
  close(): Promise<void>;
}

/** What this node knows of its dependencies (DECISIONS.md "Reliability promises"). */
export interface Health {
  /** Probes the database now, bounded by a short timeout: true when it answered. */
  database(): Promise<boolean>;
  /** True while the database is known unreachable or stuck: a request past its deadline answers 503. */
  databaseSuspect(): boolean;
  /** Parts that are down without taking the node out of the balancer (Redis). */
  degraded(): string[];
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
  health: Health;
  /** This node's running services, set by the composition root as they start (src/app.ts). */
  services: NodeServices;
  /** Set on a view of the node's context (an idempotent write's transaction, src/domain/idempotency.ts):
   * the node's own context, which per-node memories are keyed by. */
  base?: Ctx;
}

/** The node's own context (per-node memories are keyed by it, never by a per-request view). */
export const nodeCtx = (ctx: Ctx): Ctx => ctx.base ?? ctx;

/** The node-local services use cases reach through the context (never a module-level registry),
 * so a dependency shows in a signature. Null until started (and after stop). */
export interface NodeServices {
  /** The resident actors (src/actors/residents.ts). */
  presence: PresenceService | null;
  /** The open chat's recent pages in memory (src/domain/chat-room.ts). */
  chatRoom: ChatPages | null;
  /** The group commit of chat posts (src/store/group-commit.ts): post in, seq out once committed. */
  chatPosts: { submit(row: NewChatRow): Promise<StoredChat | null> } | null;
  /** The node's chat indexer (src/actors/chat-indexer.ts): woken after each post's commit. */
  chatIndexer: { wake(): void } | null;
  /** Member-token checks of writes, grouped (src/domain/identity.ts openTokenChecks): hash in,
   * the identity it names (or null) out, read after the check was asked for. */
  tokenChecks: { submit(hash: Buffer): Promise<IdentityRow | null> } | null;
  /** Memory writes, grouped (src/domain/memory.ts openMemoryWrites): a write in, its result out
   * once committed. */
  memoryPuts: { submit(write: NewMemory): Promise<PutResult> } | null;
  /** Values built once per version of what they show (src/domain/versioned-memo.ts): serialized pages. */
  memo: VersionedMemo;
}

export const noServices = (): NodeServices => ({
  presence: null,
  chatRoom: null,
  chatPosts: null,
  chatIndexer: null,
  tokenChecks: null,
  memoryPuts: null,
  memo: new VersionedMemo(),
});
