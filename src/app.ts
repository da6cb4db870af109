// Composition root: the only place that knows every part (DESIGN.md).

import uWS from 'uWebSockets.js';
import { Redis } from 'ioredis';
import { startActors, stopActors } from './actors/index.js';
import type { Config } from './config.js';
import { GuestIssuer } from './domain/guests.js';
import { type Clock, type Ctx, systemClock } from './domain/ports.js';
import { createLogger, type Logger } from './log.js';
import { openStore, type Store } from './store/db.js';
import { migrate } from './store/migrate.js';
import { serverSecret } from './store/settings.js';
import { LocalBus } from './transport/bus/local.js';
import { parsePolicies, RateLimits } from './transport/http/limits.js';
import { PromMetrics } from './transport/http/metrics.js';
import { createPipeline } from './transport/http/pipeline.js';
import { Router } from './transport/http/router.js';
import { allRoutes } from './transport/http/routes/index.js';
import { type InFlight, mountHttp } from './transport/http/uws.js';

export interface AppOptions {
  config: Config;
  clock?: Clock;
  log?: Logger;
}

export interface App {
  ctx: Ctx;
  store: Store;
  router: Router;
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
  const bus = new LocalBus();
  let publicUrl = config.publicUrl ?? '';
  const metrics = new PromMetrics(store.sql);
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
  const app = uWS.App();
  mountHttp(app, createPipeline(ctx, router, guests, { limits, metrics }), inflight);

  const listenSocket = await new Promise<uWS.us_listen_socket>((ok, ko) => {
    app.listen(config.host, config.port, (s) => (s ? ok(s) : ko(new Error(`cannot listen on ${config.host}:${config.port}`))));
  });
  const port = uWS.us_socket_local_port(listenSocket);
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  if (!config.publicUrl) publicUrl = url;
  log.info({ url, publicUrl, store: store.kind }, 'commons listening');
  const actors = await startActors(ctx);

  let closed = false;
  return {
    ctx,
    store,
    router,
    port,
    url,
    async close() {
      if (closed) return;
      closed = true;
      uWS.us_listen_socket_close(listenSocket);
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
      await bus.close();
      limitRedis?.disconnect();
      await store.close();
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
