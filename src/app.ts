// Composition root: the only place that knows every part (DESIGN.md).

import uWS from 'uWebSockets.js';
import { Redis } from 'ioredis';
import { startActors, stopActors } from './actors/index.js';
import type { Config } from './config.js';
import type { Caller } from './domain/caller.js';
import { openChatRoom, postChat } from './domain/chat.js';
import { fail } from './domain/errors.js';
import { GuestIssuer } from './domain/guests.js';
import { heartbeat } from './domain/habitat.js';
import { type Bus, type Clock, type Ctx, systemClock } from './domain/ports.js';
import { createLogger, type Logger } from './log.js';
import { openStore, type Store } from './store/db.js';
import { findById } from './store/identities.js';
import { migrate } from './store/migrate.js';
import { serverSecret } from './store/settings.js';
import { mountA2a } from './transport/a2a/endpoint.js';
import { LocalBus } from './transport/bus/local.js';
import { RedisBus } from './transport/bus/redis.js';
import { parsePolicies, RateLimits } from './transport/http/limits.js';
import { PromMetrics } from './transport/http/metrics.js';
import { createPipeline } from './transport/http/pipeline.js';
import { Router } from './transport/http/router.js';
import { allRoutes } from './transport/http/routes/index.js';
import { type InFlight, mountHttp } from './transport/http/uws.js';
import { mountMcp } from './transport/mcp/server.js';
import { mountNostrRelay } from './transport/nostr/relay.js';
import type { StreamOps } from './transport/ws/dispatch.js';
import { signalFeed } from './transport/ws/signal-feed.js';
import { mountStream, type Stream } from './transport/ws/stream.js';
import { chatFeed } from './transport/ws/topics.js';

export interface AppOptions {
  config: Config;
  clock?: Clock;
  log?: Logger;
}

export interface App {
  ctx: Ctx;
  store: Store;
  router: Router;
  stream: Stream;
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function startApp(opts: AppOptions): Promise<App> {
  const { config } = opts;
  const log = opts.log ?? createLogger(config.logLevel);
  const store = await openStore({ databaseUrl: config.databaseUrl, schema: config.databaseSchema, dataDir: config.dataDir });
  await migrate(store.sql);
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
  const ctx: Ctx = { sql: store.sql, config, log, clock: opts.clock ?? systemClock, bus, secret, publicUrl: () => publicUrl, metrics };
  // Rate-limit counters live in Redis when it is configured, so limits hold across nodes.
  const limitRedis = config.rateLimits && config.redisUrl ? await connectRedis(config.redisUrl, log) : null;
  limitRedis?.on('error', () => metrics.busErrors.inc());
  const limits = config.rateLimits
    ? new RateLimits(ctx, parsePolicies(config.rateLimitPolicy), limitRedis && { client: limitRedis, prefix: config.redisPrefix }, (cls) =>
        metrics.rateLimited.inc({ class: cls }),
      )
    : undefined;

  const router = new Router();
  for (const r of allRoutes()) router.add(r);
  const guests = new GuestIssuer(ctx);
  const inflight: InFlight = { count: 0, drained: null };
  const chatRoom = await openChatRoom(ctx);
  const app = uWS.App();
  // The stream is mounted before the catch-all HTTP route so its path is matched first.
  const signal = await signalFeed(ctx);
  const feeds = { chat: chatFeed(chatRoom), signal };
  const stream = mountStream(app, { ctx, guests, feeds, ops: streamOps(ctx), limits });
  const nostrRelay = mountNostrRelay(app, ctx);
  // The tool protocols are mounted before the catch-all HTTP route so their paths match first.
  mountMcp(app, { ctx, guests, router, limits }, inflight);
  mountA2a(app, { ctx, guests, router, limits }, inflight);
  mountHttp(app, createPipeline(ctx, router, guests, { limits, metrics }), inflight);

  const listenSocket = await new Promise<uWS.us_listen_socket>((ok, ko) => {
    app.listen(config.host, config.port, (s) => (s ? ok(s) : ko(new Error(`cannot listen on ${config.host}:${config.port}`))));
  });
  const port = uWS.us_socket_local_port(listenSocket);
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  if (!config.publicUrl) publicUrl = url;
  log.info({ url, publicUrl, store: store.kind, pid: process.pid }, 'commons listening');
  const actors = await startActors(ctx);

  let closed = false;
  return {
    ctx,
    store,
    router,
    stream,
    port,
    url,
    async close() {
      if (closed) return;
      closed = true;
      uWS.us_listen_socket_close(listenSocket);
      stream.close(1001, 'server shutting down');
      nostrRelay.close();
      await stopActors(actors);
      if (inflight.count > 0) {
        await new Promise<void>((ok) => {
          const timer = setTimeout(ok, 10_000);
          inflight.drained = () => {
            clearTimeout(timer);
            ok();
          };
        });
      }
      chatRoom.close();
      signal.close();
      await bus.close();
      limitRedis?.disconnect();
      await store.close();
    },
  };
}

/** The stream's ops that belong to other areas (issue 3: habitat heartbeat is wired when it lands). */
function streamOps(ctx: Ctx): StreamOps {
  return {
    chat: (caller, input) => postChat(ctx, caller, input),
    heartbeat: async (caller: Caller, statusNote) => {
      if (caller.kind !== 'member') return fail('REGISTRATION_REQUIRED', 'heartbeats are for registered identities; register first');
      // The session holds the row read at `auth`; the heartbeat needs the current state.
      const member = await findById(ctx.sql, caller.member.id);
      if (!member) return fail('UNAUTHORIZED', 'this identity is gone');
      return heartbeat(ctx, member, statusNote);
    },
  };
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
