// What the domain needs from the outside world, as small interfaces. Implementations live in
// src/store (SQL) and src/transport (bus); the domain never imports them.

import type { Sql } from 'postgres';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { NewChatRow, StoredChat } from '../store/chat.js';
import type { IdentityRow } from '../store/identities.js';
import type { NewMemory, PutResult } from '../store/memory.js';
import type { ChatMessage } from './chat-record.js';
import type { Metrics } from './metrics.js';
import type { TaskDone, TaskWrite } from './task-writes.js';
import { VersionedMemo } from './versioned-memo.js';

export type { Sql };

export interface Clock {
  now(): Date;
  /** `now().getTime()` without a Date (a hot path's form). */
  nowMs(): number;
}

export const systemClock: Clock = { now: () => new Date(), nowMs: () => Date.now() };

/** A message on the bus: a topic, an event id (monotonic per topic when durable), and data. */
export interface BusMessage {
  topic: string;
  id: string;
  data: unknown;
}

/** Announced to this node's own subscribers (never sent across) when a cross-node bus is live
 * again after losing its connection: whatever the other nodes sent meanwhile was lost, and a
 * message that no later one follows shows no gap, so listeners catch up from the database. */
export const BUS_RESUMED_TOPIC = 'bus.resumed';

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
}

/** What the chat use cases read from the room (ctx.services.chatRoom; src/domain/chat-room.ts). */
export interface ChatPages {
  page(limit: number, beforeSeq: number | null): { messages: ChatMessage[]; more: boolean } | null;
  /** The seq of the newest message this node has handed on (hidden ones included). */
  readonly lastSeq: number;
  /** Counts the changes to what the newest pages show (settled and hidden messages). */
  readonly version: number;
}

export interface HeartbeatOutcome {
  /** The resident moved offline -> online (announced on the presence topic). */
  cameOnline: boolean;
  /** ms since epoch. */
  onlineUntil: number;
}

/** The presence service the habitat domain talks to (src/domain/presence.ts): the resident actors
 * of this node (src/actors/residents.ts), backed by Redis when REDIS_URL is set. */
export interface PresenceService {
  /** HEARTBEAT to the resident's actor; the write to PostgreSQL is coalesced. Synchronous when
   * presence is in this process alone (the hot path), a promise when Redis decides. */
  heartbeat(identityId: number, at: Date, statusNote: string | undefined): HeartbeatOutcome | Promise<HeartbeatOutcome>;
  /** Residents online now (every node agrees when Redis is shared). */
  onlineCount(): Promise<number>;
  isOnline(identityId: number): Promise<boolean>;
  /** The UTC day (days since epoch) last credited with heartbeat points, -1 when unknown. */
  creditedDay(identityId: number): number;
  markCredited(identityId: number, day: number): void;
  /** Writes pending heartbeats to PostgreSQL now. */
  flush(): Promise<void>;
}

export interface TokenCacheEntry {
  member: IdentityRow;
  at: number;
  /** A background lookup was started for it: one per entry, also when it fails (the database
   * down), so reads then never start one lookup each. */
  refreshing?: boolean;
}

/** Member tokens this node resolved for reads (src/domain/token-cache.ts). */
export interface TokenCacheState {
  /** By the token's stored hash (SHA-256), base64. */
  entries: Map<string, TokenCacheEntry>;
  /** Lookups in flight, one per key: a burst of reads of one token waits for one query. */
  pending: Map<string, Promise<IdentityRow | null>>;
  /** Raised by every clear: a lookup begun before a clear does not store what it read. */
  generation: number;
}

/** The node-local services use cases reach through the context (never a module-level registry),
 * so a dependency shows in a signature. A started service is null until started and after stop
 * (its starter clears it, src/app.ts and src/actors/index.ts); the node's memories below it exist
 * as long as the context. A view of the context (an idempotent write's transaction) shares them. */
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
  /** Task posts and moves, grouped (src/domain/task-commit.ts openTaskWrites): a write in, its task's
   * view and moves (or its refusal) out once committed. */
  taskWrites: { submit(write: TaskWrite): Promise<TaskDone> } | null;
  /** Member tokens resolved for reads, forgotten when any token changes (src/domain/token-cache.ts openTokenCache). */
  tokenCache: TokenCacheState | null;
  /** Values built once per version of what they show (src/domain/versioned-memo.ts): serialized pages. */
  memo: VersionedMemo;
  /** The last hour's registrations as last counted (null: not yet) and when expired challenges
   * were last pruned (ms), src/domain/register-work.ts. */
  registerWork: { count: { n: number; at: number } | null; lastPrune: number };
  /** The Idempotency-Keys (`scope\nkey`) whose writes run on this node now (src/domain/idempotency.ts). */
  keysRunning: Set<string>;
}

export const noServices = (): NodeServices => ({
  presence: null,
  chatRoom: null,
  chatPosts: null,
  chatIndexer: null,
  tokenChecks: null,
  memoryPuts: null,
  taskWrites: null,
  tokenCache: null,
  memo: new VersionedMemo(),
  registerWork: { count: null, lastPrune: 0 },
  keysRunning: new Set(),
});
