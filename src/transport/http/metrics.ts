// /metrics in the Prometheus text format (prom-client), one Registry per app instance so that two
// apps in one process (tests, benchmarks) never share counters. Request counts and latencies are
// observed by the HTTP pipeline; the other areas count through the domain's Metrics interface.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Metrics } from '../../domain/metrics.js';
import type { Sql } from '../../domain/ports.js';
import { RequestMetrics, type RequestObserver } from './request-metrics.js';

/** Online window of a resident (spec 2.10: 30 minutes after a heartbeat). */
const ONLINE_WINDOW_MIN = 30;

export class PromMetrics implements Metrics {
  readonly registry = new Registry();
  /** commons_http_requests_total and commons_http_request_duration_seconds (request-metrics.ts). */
  readonly requests: RequestMetrics;
  readonly rateLimited: Counter<'class'>;
  readonly wsSessions: Gauge;
  readonly busErrors: Counter;
  readonly dbErrors: Counter;
  readonly schedulerTicks: Counter<'scheduler'>;
  readonly registerDifficulty: Gauge;
  readonly powRefused: Counter;
  readonly chatCommitSeconds: Histogram;
  readonly fanoutWaitSeconds: Histogram;
  readonly chatIndexLagSeconds: Histogram;
  readonly chatIndexSteps: Counter;

  constructor(sql: Sql) {
    const registers = [this.registry];
    this.requests = new RequestMetrics(this.registry);
    this.rateLimited = new Counter({
      name: 'commons_rate_limited_total',
      help: 'Requests refused with 429, by limit class',
      labelNames: ['class'],
      registers,
    });
    this.wsSessions = new Gauge({ name: 'commons_ws_sessions', help: 'Open WebSocket sessions on this node', registers });
    this.busErrors = new Counter({ name: 'commons_bus_errors_total', help: 'Bus publish/receive failures', registers });
    this.dbErrors = new Counter({ name: 'commons_db_errors_total', help: 'Database errors', registers });
    this.schedulerTicks = new Counter({
      name: 'commons_scheduler_ticks_total',
      help: 'Scheduler ticks run by this node: signal ticks, task-deadline passes, deposit-verifier passes',
      labelNames: ['scheduler'],
      registers,
    });
    this.registerDifficulty = new Gauge({
      name: 'commons_register_difficulty_bits',
      help: 'Registration work: the difficulty in leading zero bits this node last asked for (rises during a flood)',
      registers,
    });
    this.powRefused = new Counter({
      name: 'commons_register_pow_refused_total',
      help: 'Registrations refused with POW_REQUIRED (no, wrong, expired or reused proof)',
      registers,
    });
    const fine = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
    this.chatCommitSeconds = new Histogram({
      name: 'commons_chat_commit_seconds',
      help: 'Time of one group commit of chat posts (the statement, until durable)',
      buckets: fine,
      registers,
    });
    this.fanoutWaitSeconds = new Histogram({
      name: 'commons_fanout_wait_seconds',
      help: 'Time a stream event waited in the fan-out queue before its publish burst (0 when idle)',
      buckets: [0, ...fine],
      registers,
    });
    this.chatIndexLagSeconds = new Histogram({
      name: 'commons_chat_index_lag_seconds',
      help: 'Per chat message, from its post to the commit of what it derives (searchable, scored, in mentioned inboxes)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    });
    this.chatIndexSteps = new Counter({
      name: 'commons_chat_index_steps_total',
      help: 'Chat indexer steps that indexed messages (messages indexed / steps = the step size)',
      registers,
    });
    const dbErrors = this.dbErrors;
    // Residents online and deposits are read from the database at scrape time: the database is the
    // truth across nodes (DESIGN.md), so every node reports the same figures.
    new Gauge({
      name: 'commons_residents_online',
      help: `Residents with a heartbeat in the last ${ONLINE_WINDOW_MIN} minutes`,
      registers,
      async collect() {
        try {
          const [row] = await sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM identities
            WHERE last_heartbeat_at > now() - make_interval(mins => ${ONLINE_WINDOW_MIN})`;
          this.set(row?.n ?? 0);
        } catch {
          dbErrors.inc();
        }
      },
    });
    new Gauge({
      name: 'commons_chat_unindexed_messages',
      help: 'Chat messages committed and not yet indexed (searchable, scored, in mentioned inboxes): the indexer backlog',
      registers,
      async collect() {
        try {
          const [row] = await sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM chat_messages WHERE seq > (SELECT indexed_seq FROM chat_index)`;
          this.set(row?.n ?? 0);
        } catch {
          dbErrors.inc();
        }
      },
    });
    new Gauge({
      name: 'commons_deposits',
      help: 'Treasury deposits by state',
      labelNames: ['state'],
      registers,
      async collect() {
        this.reset();
        try {
          // Tolerant of an instance (or a branch) without the deposits table.
          const [t] = await sql<{ present: boolean }[]>`SELECT to_regclass('deposits') IS NOT NULL AS present`;
          if (!t?.present) return;
          const rows = await sql<{ state: string; n: number }[]>`SELECT state, count(*)::int AS n FROM deposits GROUP BY state`;
          for (const r of rows) this.set({ state: r.state }, r.n);
        } catch {
          dbErrors.inc();
        }
      },
    });
    new Gauge({
      name: 'commons_process_resident_memory_bytes',
      help: 'Resident set size of this process',
      registers,
      collect() {
        this.set(process.memoryUsage().rss);
      },
    });
  }

  /** commons_dependency_up{part}: 1 when the part answers; a degraded Redis shows here and in /readyz. */
  trackDependencies(parts: () => Record<string, boolean>): void {
    new Gauge({
      name: 'commons_dependency_up',
      help: 'Whether each dependency answers this node (database, redis)',
      labelNames: ['part'],
      registers: [this.registry],
      collect() {
        for (const [part, up] of Object.entries(parts())) this.set({ part }, up ? 1 : 0);
      },
    });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requestChild(method, route, status).observe(seconds);
  }

  /** The request observer of one (method, route, status), to keep on a hot path. */
  requestChild(method: string, route: string, status: number): RequestObserver {
    return this.requests.child(method, route, status);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
