// Composition root: the only place that knows every part (DESIGN.md).

import type { us_listen_socket } from 'uWebSockets.js';
import { Redis } from 'ioredis';
import { type RunningActors, startActors, stopActors } from './actors/index.js';
import { openAppStore } from './app-store.js';
import type { Config } from './config.js';
import { closeChatRoom, openChatRoom } from './domain/chat.js';
import { GuestIssuer } from './domain/guests.js';
import { HeartbeatRows, sessionHeartbeat } from './domain/habitat.js';
import { openTokenChecks, validTokenKeys } from './domain/identity.js';
import { openMemoryWrites } from './domain/memory.js';
import { type Bus, type Clock, type Ctx, type Health, noServices, systemClock } from './domain/ports.js';
import { openTaskWrites } from './domain/task-commit.js';
import { openTokenCache } from './domain/token-cache.js';
import { createLogger, type Logger } from './log.js';
import type { Store } from './store/db.js';
import { DbHealth } from './store/health.js';
import { migrate } from './store/migrate.js';
import { serverSecret } from './store/settings.js';
import { VERIFIED_KEYS } from './transport/admission/limits/known-tokens.js';
import { parsePolicies } from './transport/admission/limits/policies.js';
import { RateLimits } from './transport/admission/limits/rate-limits.js';
import { allRoutes } from './transport/all-routes.js';
import { LocalBus } from './transport/bus/local.js';
import { RedisBus } from './transport/bus/redis.js';
import { answerHead } from './transport/edge/head.js';
import { mountWeb, type WebHandler } from './transport/edge/web.js';
import { createFastRead, type FastRead } from './transport/http/fast-read.js';
import { PromMetrics } from './transport/http/metrics.js';
import { createPipeline } from './transport/http/pipeline.js';
import { type InFlight, mountHttp } from './transport/http/uws.js';
import { mountNostrRelay } from './transport/nostr/relay.js';
import { A2A_PATH, MCP_PATH } from './transport/paths.js';
import { Router } from './transport/runner/router.js';
import { describeUwsBuild, uWS, uwsBuild } from './transport/uws-build.js';
import { type StreamOps, streamOps } from './transport/ws/ops.js';
import { signalFeed } from './transport/ws/signal-feed.js';
import { mountStream, type Stream } from './transport/ws/stream.js';
import { chatFeed } from './transport/ws/topics.js';

export interface AppOptions {
  config: Config;
  clock?: Clock;
  log?: Logger;
  /** A store already being opened (main.ts starts the embedded database before loading the rest). */
  store?: Promise<Store>;
  /** What to do when the embedded database's worker dies (default: log and exit 70). */
  onStoreLost?: (err: Error) => void;
}

export interface App {
  ctx: Ctx;
  store: Store;
  router: Router;
  /** The running actors (tests drive the scheduler and the verifier directly). */
  actors: RunningActors;
  stream: Stream;
  /** The lean read path (its `answered` count is a test hook). */
  fastRead: FastRead;
  port: number;
  url: string;
  /** True when every in-flight request finished and the store closed cleanly; false when the stop
   * had to cut something short (src/main.ts exits 1 then). */
  close(): Promise<boolean>;
}

export async function startApp(opts: AppOptions): Promise<App> {
  const { config } = opts;
  const log = opts.log ?? createLogger(config.logLevel);
  const store = await (opts.store ?? openAppStore(config, log, opts.onStoreLost));
  // A schema newer than this build refuses the start (src/store/migrate.ts); the store is closed
  // so the caller sees the reason and nothing stays open.
  await migrate(store.sql).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  await store.settle?.();
  const secret = await serverSecret(store.sql);
  const metrics = new PromMetrics(store.sql);
  const busError = () => metrics.busErrors.inc();
  const bus: Bus = config.redisUrl
    ? await RedisBus.connect(config.redisUrl, config.redisPrefix, log, busError)
    : new LocalBus((err, topic) => {
        busError();
        log.error({ err, topic }, 'bus subscriber failed');
      });
  let publicUrl = config.publicUrl ?? '';
  const dbHealth = config.databaseUrl
    ? DbHealth.forPostgres(config.databaseUrl, { timeoutMs: 750, intervalMs: 250 })
    : // The embedded database lives in this process: it is lost only with its worker (the process exits).
      new DbHealth(store.sql, { timeoutMs: 5000, intervalMs: 0 }, false);
  let limitRedis: Redis | null = null;
  const redisUp = () => (!(bus instanceof RedisBus) || bus.connected) && (!limitRedis || limitRedis.status === 'ready');
  const health: Health = {
    database: () => dbHealth.check(),
    databaseSuspect: () => dbHealth.suspect(),
    degraded: () => (redisUp() ? [] : ['redis']),
  };
  metrics.trackDependencies(() => ({ database: dbHealth.isUp, ...(config.redisUrl ? { redis: redisUp() } : {}) }));
  const ctx: Ctx = {
    sql: store.sql,
    config,
    log,
    clock: opts.clock ?? systemClock,
    bus,
    secret,
    publicUrl: () => publicUrl,
    metrics,
    health,
    services: noServices(),
  };
  // Rate-limit counters live in Redis when it is configured, so limits hold across nodes.
  limitRedis = config.rateLimits && config.redisUrl ? await connectRedis(config.redisUrl, log) : null;
  limitRedis?.on('error', () => metrics.busErrors.inc());
  const guests = new GuestIssuer(ctx);
  const limits = config.rateLimits
    ? new RateLimits(
        ctx,
        parsePolicies(config.rateLimitPolicy),
        limitRedis && { client: limitRedis, prefix: config.redisPrefix },
        (cls) => metrics.rateLimited.inc({ class: cls }),
        (token) => guests.claimOf(token),
      )
    : undefined;

  // A starting node knows its members' current tokens, so a budget strangers spend from a shared
  // address never locks them out, also right after a restart (docs/security.md "A shared address").
  if (limits) limits.know(await validTokenKeys(ctx, VERIFIED_KEYS));

  const router = new Router();
  for (const r of allRoutes()) router.add(r);
  const inflight: InFlight = { count: 0, drained: null };
  // The node's services in ctx.services, each with its stop, run on close in reverse order (the
  // actors have their own table, src/actors/index.ts). Whoever opens one here stops it here.
  const services: { name: string; stop: () => void }[] = [];
  const chatRoom = await openChatRoom(ctx);
  services.push({ name: 'chat room and posts', stop: () => closeChatRoom(ctx, chatRoom) });
  services.push({ name: 'token checks', stop: openTokenChecks(ctx) });
  services.push({ name: 'memory writes', stop: openMemoryWrites(ctx) });
  services.push({ name: 'task writes', stop: openTaskWrites(ctx) });
  services.push({ name: 'token cache', stop: openTokenCache(ctx) });
  const app = uWS.App();
  // The stream is mounted before the catch-all HTTP route so its path is matched first.
  const signal = await signalFeed(ctx);
  services.push({ name: 'signal feed', stop: () => signal.close() });
  const feeds = { chat: chatFeed(chatRoom), signal };
  const stream = mountStream(app, { ctx, guests, feeds, ops: streamOperations(router), limits });
  const nostrRelay = mountNostrRelay(app, ctx);
  // The tool protocols are mounted before the catch-all HTTP route so their paths match first.
  // Their SDKs (MCP's with its validators, A2A's) load on the first request to each: an idle node
  // that never serves them does not hold them (issue 47; docs/benchmarks-history.md "Memory at
  // rest and anonymous reads (issue 47)").
  const deps = { ctx, guests, router, limits };
  const mcp = lazyHandler(async () => {
    const { handleMcp } = await import('./transport/mcp/server.js');
    return (req, info) => handleMcp(deps, req, info);
  });
  const a2a = lazyHandler(async () => (await import('./transport/a2a/endpoint.js')).a2aHandler(deps));
  mountWeb(app, MCP_PATH, mcp, inflight, answerHead(config), 'POST, OPTIONS');
  mountWeb(app, A2A_PATH, a2a, inflight, answerHead(config), 'POST');
  const fastRead = createFastRead(ctx, router, guests, limits, metrics);
  mountHttp(app, createPipeline(ctx, router, guests, { limits, metrics }), inflight, answerHead(config), fastRead);

  const listenSocket = await new Promise<us_listen_socket>((ok, ko) => {
    app.listen(config.host, config.port, (s) => (s ? ok(s) : ko(new Error(`cannot listen on ${config.host}:${config.port}`))));
  });
  const port = uWS.us_socket_local_port(listenSocket);
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  if (!config.publicUrl) publicUrl = url;
  log.info({ url, publicUrl, store: store.kind, pid: process.pid }, 'commons listening');
  // The one line naming the runtime; on the fallback build it says what that build lacks.
  if (uwsBuild.kind === 'current') log.info({ uws: uwsBuild }, describeUwsBuild());
  else log.warn({ uws: uwsBuild }, describeUwsBuild());
  const actors = await startActors(ctx);

  let closed = false;
  return {
    ctx,
    store,
    router,
    actors,
    stream,
    fastRead,
    port,
    url,
    async close() {
      if (closed) return true;
      closed = true;
      let drained = true;
      // The order matters (DECISIONS.md "Reliability promises"): stop accepting, let in-flight
      // requests finish (their writes and heartbeats reach the actors), close the sockets, stop
      // the actors (the last heartbeat flush), and only then the bus and the store they use.
      inflight.stopping = true;
      uWS.us_listen_socket_close(listenSocket);
      if (inflight.count > 0) {
        await new Promise<void>((ok) => {
          // Within the stop's 10 s (src/main.ts): requests still running after 4 s are cut short.
          const timer = setTimeout(() => {
            drained = false;
            ok();
          }, 4000);
          inflight.drained = () => {
            clearTimeout(timer);
            ok();
          };
        });
      }
      stream.close(1001, 'server shutting down');
      nostrRelay.close();
      await stopActors(actors.all);
      for (const service of services.reverse()) service.stop();
      await bus.close();
      limitRedis?.disconnect();
      await dbHealth.close();
      return (await store.close()) && drained;
    },
  };
}

/** The stream's ops that belong to other areas: wiring only, the use cases are in the domain. */
/** A handler whose module is imported when the first request needs it (a failed import is tried
 * again by the next request). */
function lazyHandler(load: () => Promise<WebHandler>): WebHandler {
  let loaded: Promise<WebHandler> | null = null;
  return (req, info) => {
    loaded ??= load().catch((err: unknown) => {
      loaded = null;
      throw err;
    });
    return loaded.then((handle) => handle(req, info));
  };
}

/** The stream's operations: chat is the REST route's; heartbeats keep the member's row per node. */
function streamOperations(router: Router): StreamOps {
  const rows = new HeartbeatRows();
  return streamOps(router, (c, caller, statusNote) => sessionHeartbeat(c, caller, statusNote, rows));
}

/** A Redis connection for rate-limit counters. Until Redis answers, limits count in this node's
 * memory (the limiter's insurance), so a Redis outage neither opens nor closes the service. */
async function connectRedis(url: string, log: Logger): Promise<Redis> {
  const client = new Redis(url, { enableOfflineQueue: false, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
  } catch {
    log.warn('redis unreachable at start: rate limits count in memory until it answers');
  }
  return client;
}
