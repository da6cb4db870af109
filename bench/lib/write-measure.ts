// What the write suite (bench/http-write.ts) measures with: the chat post it sends, a running
// server's handle, the indexer's lag around a run, the baselines' processes, the alternating
// saturation rounds with their half-saturation run, and PostgreSQL's commit floor.
import postgres from 'postgres';
import { medianRow, type Row, runWrk } from './http-wrk.js';
import { type Proc, startRole } from './procs.js';

/** What a measurement needs of the suite's options. */
export interface MeasureOptions {
  seconds: number;
  rounds: number;
  connections: number;
}

/** The chat post every write scenario sends (also bench/write-profile.ts). */
export const BODY = JSON.stringify({ body: 'a benchmark message of ordinary length, about as long as a short chat line' });

export interface Running {
  name: string;
  pid: number;
  url: string;
  stop: () => Promise<void>;
}

export const running = (name: string, p: Proc): Running => ({ name, pid: p.pid, url: `http://127.0.0.1:${p.port}`, stop: () => p.stop() });

/** The lag histogram's cumulative bucket counts (le in seconds -> count), and the backlog. */
async function lagState(url: string): Promise<{ buckets: Map<number, number>; backlog: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<number, number>();
  let backlog = -1;
  for (const line of text.split('\n')) {
    const b = /^commons_chat_index_lag_seconds_bucket\{le="([^"]+)"\} (\d+)/.exec(line);
    if (b) buckets.set(b[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(b[1]), Number(b[2]));
    const g = /^commons_chat_unindexed_messages (\d+)/.exec(line);
    if (g) backlog = Number(g[1]);
  }
  return { buckets, backlog };
}

/** Runs `fn` against the project and adds its indexer's lag over the run's posts to the row. */
async function withLag(s: Running, fn: () => Promise<Omit<Row, 'suite' | 'server' | 'scenario'>>) {
  const before = await lagState(s.url);
  const r = await fn();
  const ended = performance.now();
  let after = await lagState(s.url);
  while (after.backlog !== 0 && performance.now() - ended < 120_000) {
    await new Promise((ok) => setTimeout(ok, 50));
    after = await lagState(s.url);
  }
  const drain_ms = Math.round(performance.now() - ended);
  const les = [...after.buckets.keys()].sort((a, b) => a - b);
  const delta = les.map((le) => (after.buckets.get(le) ?? 0) - (before.buckets.get(le) ?? 0));
  const total = delta.at(-1) ?? 0;
  const q = (f: number) => {
    const i = delta.findIndex((n) => n >= f * total);
    const le = les[i] ?? Number.POSITIVE_INFINITY;
    return Number.isFinite(le) ? le * 1000 : -1;
  };
  return { ...r, index_lag: { p50_ms: q(0.5), p99_ms: q(0.99), max_ms: q(1), drain_ms, messages: total } };
}

/** A baseline role of bench/lib/http-baselines.ts with its environment. */
export async function baseline(name: string, role: string, env: Record<string, string>): Promise<Running> {
  Object.assign(process.env, env);
  return running(name, await startRole('bench/lib/http-baselines.ts', role));
}

export async function measure(
  suite: string,
  servers: { s: Running; headers: Record<string, string> }[],
  o: MeasureOptions,
  withHalf = true,
  /** The servers use this machine's PostgreSQL: measure its CPU too. */
  database = false,
) {
  const rows: Row[] = [];
  const post = (s: Running, headers: Record<string, string>, delayMs = 0) => {
    const wrk = () =>
      runWrk({
        url: `${s.url}/api/v1/chat`,
        seconds: o.seconds,
        connections: o.connections,
        method: 'POST',
        body: BODY,
        headers: { 'content-type': 'application/json', ...headers },
        serverPid: s.pid,
        delayMs,
        database,
      });
    return s.name.startsWith('commons') ? withLag(s, wrk) : wrk();
  };
  const sat = new Map<string, Row[]>();
  for (let round = 0; round < o.rounds; round++) {
    // Alternate which server goes first, so neither always runs on a warmer machine.
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const { s, headers } of order) {
      const r = await post(s, headers);
      const row: Row = { suite, server: s.name, scenario: `saturation c=${o.connections}`, ...r };
      sat.set(s.name, [...(sat.get(s.name) ?? []), row]);
    }
  }
  for (const { s, headers } of servers) {
    const m = medianRow(sat.get(s.name) ?? []);
    rows.push(m);
    if (!withHalf) continue;
    // Half of its own saturation: each connection pauses so the offered rate is about half.
    const delayMs = Math.max(1, Math.round((1000 * o.connections) / (m.rps / 2)));
    const half = await post(s, headers, delayMs);
    rows.push({ suite, server: s.name, scenario: `half saturation (~${Math.round(m.rps / 2)}/s)`, ...half });
  }
  return rows;
}

/**
 * The floor a closed loop of writers meets here: one connection, one autocommit INSERT after
 * another, each answered only once durable. A client that waits for its answer can make at most
 * one write per this latency, so `c` such clients at most c / latency writes per second, whatever
 * the server does between them.
 */
export async function commitFloor(url: string, schema: string, seconds: number): Promise<Row> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await sql.unsafe(`CREATE TABLE "${schema}".t (id bigserial PRIMARY KEY, body text NOT NULL)`);
    const times: number[] = [];
    const end = performance.now() + Math.min(seconds, 3) * 1000;
    while (performance.now() < end) {
      const t = performance.now();
      await sql.unsafe(`INSERT INTO "${schema}".t (body) VALUES ($1)`, ['x']);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
    return {
      suite: 'write',
      server: 'PostgreSQL alone',
      scenario: 'one autocommit INSERT at a time (commit floor)',
      rps: times.length / Math.min(seconds, 3),
      p50_ms: at(0.5),
      p99_ms: at(0.99),
      server_cpu: 0,
      client_cpu: 0,
      client_bound: false,
      per_cpu_s: 0,
      errors: 0,
    };
  } finally {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  }
}
