// What the rest of the service may count, without knowing about Prometheus or the transport
// (DECISIONS.md "Operator"). The implementation (prom-client, one registry per app) is in
// src/transport/http/metrics.ts; areas reach it through ctx.metrics.

export interface GaugeLike {
  inc(n?: number): void;
  dec(n?: number): void;
  set(n: number): void;
}

export interface CounterLike {
  inc(n?: number): void;
}

export interface ObserverLike {
  observe(value: number): void;
}

/** The schedulers that count their ticks (a signal tick, a task-deadline pass, a deposit-verifier pass). */
export type SchedulerName = 'signal' | 'task_deadlines' | 'deposit_verifier';

export interface Metrics {
  /** Open WebSocket sessions on this node (the stream increments on open, decrements on close). */
  wsSessions: GaugeLike;
  /** Failures publishing to or receiving from the bus. */
  busErrors: CounterLike;
  /** Database errors (the HTTP pipeline counts those that reach it; actors count their own). */
  dbErrors: CounterLike;
  /** Scheduler ticks run by this node, by scheduler. */
  schedulerTicks: { inc(labels: { scheduler: SchedulerName }, n?: number): void };
  /** Registration work (docs/registration-work.md): the difficulty last computed on this node, and
   * registrations refused with POW_REQUIRED. */
  registerDifficulty: GaugeLike;
  powRefused: CounterLike;
  /** Where a chat message's delivery time goes (BENCHMARKS.md "Fan-out"): how long each group
   * commit of chat posts took, and how long each event waited in the fan-out queue (0 when it went
   * out at once). */
  chatCommitSeconds: ObserverLike;
  fanoutWaitSeconds: ObserverLike;
  /** The chat indexer's lag (issue 36, docs/chat.md "Indexing"): per message, from its post (the
   * time its writer took, before the commit) to the commit of its derived records. */
  chatIndexLagSeconds: ObserverLike;
  /** The chat indexer's steps that indexed something (messages / steps: the step size). */
  chatIndexSteps: CounterLike;
  /** The exposition (Prometheus text format) and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

const noop = { inc() {}, dec() {}, set() {}, observe() {} };

/** For contexts built without a transport (unit tests of domain code). */
export const noMetrics: Metrics = {
  wsSessions: noop,
  busErrors: noop,
  dbErrors: noop,
  schedulerTicks: noop,
  registerDifficulty: noop,
  powRefused: noop,
  chatCommitSeconds: noop,
  fanoutWaitSeconds: noop,
  chatIndexLagSeconds: noop,
  chatIndexSteps: noop,
  render: async () => ({ contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '' }),
};

/** A fault of the database or of the connection to it (counted as commons_db_errors_total):
 * Postgres errors carry a 5-character SQLSTATE; connection failures their own codes. */
export function isDatabaseError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    (err as Error | null)?.name === 'PostgresError' ||
    (typeof code === 'string' && /^(ECONNREFUSED|CONNECTION_|CONNECT_TIMEOUT)/.test(code))
  );
}

/** Counts `err` when it is a database error (actors call it from their catch blocks). */
export function countDbError(metrics: Metrics, err: unknown): void {
  if (isDatabaseError(err)) metrics.dbErrors.inc();
}
