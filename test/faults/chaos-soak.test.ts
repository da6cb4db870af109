// The chaos soak (issue 34; DECISIONS.md "Reliability promises", "Idempotent writes"): three nodes
// (child processes) on a private PostgreSQL cluster and a private Redis, under mixed load (chat
// writers, task-escrow workers, one stream subscriber per node resuming with `since`), while
// nodes are killed -9 and started again, Redis is killed -9 and started again, and PostgreSQL is
// SIGSTOPped for a few seconds. Every client retries every failed write with its Idempotency-Key
// until it is answered. Checked: no 500, no request left unanswered by a living node, every
// acknowledged write in the database exactly once (and nothing that was never acknowledged),
// credits conserved, each subscriber saw every message once and in order. CHAOS_SOAK_S sets the
// length (default 120 s); the figures are printed and kept in docs/reliability.md.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectServerErrors } from '../helpers/contract-gate.js';
import { type Answer, call } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';
import { faultsEnabled, type Node, PrivatePostgres, PrivateRedis, startNode } from './servers.js';

const SOAK_S = Number(process.env.CHAOS_SOAK_S ?? 120);
const ANSWER_MS = 10_000;
const schema = `soak_${randomBytes(4).toString('hex')}`;
const dataDir = mkdtempSync(join(tmpdir(), 'commons-soak-'));
let pg: PrivatePostgres;
let redis: PrivateRedis;
const nodes: (Node | null)[] = [null, null, null];
const env = (i: number) => ({
  DATABASE_URL: pg.url,
  DATABASE_SCHEMA: schema,
  REDIS_URL: redis.url,
  REDIS_PREFIX: `${schema}:`,
  DATA_DIR: join(dataDir, `n${i}`),
});

beforeAll(async () => {
  if (!faultsEnabled) return;
  pg = await PrivatePostgres.create();
  redis = await PrivateRedis.create();
  for (let i = 0; i < 3; i++) nodes[i] = await startNode(env(i), `n${i}`);
}, 180_000);

afterAll(async () => {
  for (const n of nodes) n?.kill();
  await Promise.all(nodes.map((n) => n?.exited));
  await redis?.kill();
  pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const figures = {
  requests: 0,
  answers: {} as Record<string, number>,
  lostToKill: 0,
  unanswered: 0,
  replayed: 0,
  chatAcked: 0,
  approvals: 0,
  retries: 0,
  slowOver2500ms: 0,
  reconnects: 0,
  faults: { nodeKills: 0, redisKills: 0, pgStops: 0 },
};
const fiveHundreds: string[] = [];
const wait = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
let turn = 0;

/** One try on a living node: its answer, 'lost' when the node died under it, 'unanswered' past ANSWER_MS. */
async function once(
  method: string,
  path: string,
  o: { token?: string; body?: unknown; key?: string },
): Promise<Answer | 'lost' | 'unanswered'> {
  const live = nodes.filter((n): n is Node => n !== null);
  const node = live[turn++ % live.length];
  if (!node) return 'lost';
  figures.requests++;
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'unanswered'>((ok) => {
    timer = setTimeout(() => ok('unanswered'), ANSWER_MS);
  });
  const attempt = call(node.url, method, path, {
    ...(o.token ? { token: o.token } : {}),
    ...(o.body !== undefined ? { body: o.body } : {}),
    ...(o.key ? { headers: { 'idempotency-key': o.key } } : {}),
  }).catch(() => 'lost' as const);
  const out = await Promise.race([attempt, timeout]);
  clearTimeout(timer);
  if (out === 'unanswered') {
    // A node killed meanwhile leaves its request unanswered by design; a living one must answer.
    if (node.child.exitCode === null && node.child.signalCode === null) figures.unanswered++;
    else figures.lostToKill++;
    return out;
  }
  if (out === 'lost') {
    figures.lostToKill++;
    return out;
  }
  if (Date.now() - started > 2500) figures.slowOver2500ms++;
  figures.answers[out.status] = (figures.answers[out.status] ?? 0) + 1;
  if (out.status >= 500 && out.status !== 503) fiveHundreds.push(`${method} ${path}: ${out.status} ${out.text.slice(0, 200)}`);
  if (out.headers.get('idempotent-replayed') === 'true') figures.replayed++;
  return out;
}

/** A write retried with its key until it is answered with a final status (not 503, not in flight). */
async function write(method: string, path: string, o: { token?: string; body?: unknown }): Promise<Answer> {
  const key = randomUUID();
  for (;;) {
    const a = await once(method, path, { ...o, key });
    if (typeof a !== 'string' && a.status !== 503 && !(a.status === 409 && a.json?.error?.code === 'IDEMPOTENCY_IN_FLIGHT')) return a;
    figures.retries++;
    await wait(100 + Math.random() * 200);
  }
}

async function register(name: string): Promise<string> {
  const r = await write('POST', '/api/v1/ai/register', { body: { name, accepted_principles: true } });
  expect(r.status, r.text).toBe(200);
  return r.json.data.api_token as string;
}

/** A subscriber bound to node `i`: reconnects to it (or, while it is down, to any node) with `since`. */
class Subscriber {
  seqs: number[] = [];
  private client: StreamClient | null = null;
  stopped = false;
  /** The node it is on (or was on last), for the failure message. */
  node = -1;
  get connected(): boolean {
    return this.client !== null;
  }
  constructor(private readonly i: number) {}

  async run(): Promise<void> {
    while (!this.stopped) {
      const node = nodes[this.i] ?? nodes.find((n) => n !== null);
      if (!node) {
        await wait(200);
        continue;
      }
      try {
        const c = await StreamClient.open(node.url);
        this.client = c;
        this.node = nodes.indexOf(node);
        const since = this.seqs.at(-1);
        const ack = await c.request('subscribe', { topic: 'chat', ...(since !== undefined ? { since: String(since) } : {}) }, 10_000);
        if (ack.op !== 'ack') throw new Error(JSON.stringify(ack));
        c.ws.on('message', () => this.drain(c));
        this.drain(c);
        await c.closed;
      } catch {
        // the node went away while connecting; try again
      }
      this.client = null;
      if (!this.stopped) {
        figures.reconnects++;
        await wait(200);
      }
    }
  }

  private drain(c: StreamClient): void {
    for (let i = 0; i < c.frames.length; ) {
      const f = c.frames[i] as { op: string; topic?: string; id?: string };
      if (f.op === 'event' && f.topic === 'chat') {
        this.seqs.push(Number(f.id));
        c.frames.splice(i, 1);
      } else i++;
    }
  }

  stop(): void {
    this.stopped = true;
    this.client?.close();
  }
}

it.runIf(faultsEnabled)(
  `chaos soak (${SOAK_S} s): nodes, Redis and PostgreSQL faulted under load; nothing lost, nothing doubled, no 500`,
  async () => {
    expectServerErrors(); // 503s under the faults are the point here (DECISIONS.md "Idempotent writes")
    const writers = await Promise.all([0, 1, 2, 3].map((i) => register(`Writer ${i}`)));
    const pairs: [string, string][] = [];
    for (let i = 0; i < 3; i++) pairs.push([await register(`Poster ${i}`), await register(`Solver ${i}`)]);
    const subscribers = [0, 1, 2].map((i) => new Subscriber(i));
    const subscribing = subscribers.map((s) => s.run());
    let running = true;
    const acked: { id: string; seq: number; body: string }[] = [];
    const chatLoop = async (token: string, w: number) => {
      for (let n = 0; running; n++) {
        const body = `w${w}-${n}-${randomBytes(3).toString('hex')}`;
        const a = await write('POST', '/api/v1/chat', { token, body: { body } });
        expect(a.status, a.text).toBe(200);
        acked.push({ id: a.json.data.id, seq: a.json.data.seq, body });
        figures.chatAcked++;
      }
    };
    const escrowLoop = async (pair: [string, string]) => {
      // The two swap roles every round, so credits go back and forth and no balance runs dry however
      // many rounds a fast machine fits in.
      let [poster, solver] = pair;
      for (; running; [poster, solver] = [solver, poster]) {
        const t = await write('POST', '/api/v1/habitat/tasks', {
          token: poster,
          body: { title: 'Soak task', body: 'Move credits.', reward_points: 5 },
        });
        expect(t.status, t.text).toBe(200);
        const id = t.json.data.id as string;
        for (const [who, step, body] of [
          [solver, 'claim', undefined],
          [solver, 'submissions', { body: 'Done.' }],
          [poster, 'approve', undefined],
        ] as const) {
          const r = await write('POST', `/api/v1/habitat/tasks/${id}/${step}`, { token: who, ...(body ? { body } : {}) });
          // A move retried after a lost answer gets its stored 200, never 409 INVALID_STATE.
          expect(r.status, `${step}: ${r.text}`).toBe(200);
        }
        figures.approvals++;
      }
    };
    const load = [...writers.map((t, w) => chatLoop(t, w)), ...pairs.map((p) => escrowLoop(p))];

    // Faults: one every 6-12 s, in turn a node killed -9 (and started again), Redis killed -9 (back
    // after 3-6 s) and PostgreSQL stopped (SIGSTOP) for 3-5 s.
    const end = Date.now() + SOAK_S * 1000;
    for (let k = 0; Date.now() < end; k++) {
      await wait(6000 + Math.random() * 6000);
      const kind = k % 3;
      if (kind === 0) {
        const i = Math.floor(k / 3) % nodes.length;
        const n = nodes[i];
        nodes[i] = null;
        n?.kill('SIGKILL');
        await n?.exited;
        figures.faults.nodeKills++;
        nodes[i] = await startNode(env(i), `n${i}`);
      } else if (kind === 1) {
        await redis.kill();
        figures.faults.redisKills++;
        await wait(3000 + Math.random() * 3000);
        await redis.start();
      } else {
        pg.freeze();
        figures.faults.pgStops++;
        await wait(3000 + Math.random() * 2000);
        pg.thaw();
      }
    }
    running = false;
    await Promise.all(load);

    // All up again: each subscriber catches up to the last message (a final post per node makes
    // each node settle what it missed while Redis was gone).
    for (let i = 0; i < 3; i++) {
      const node = nodes[i] as Node;
      const a = await call(node.url, 'POST', '/api/v1/chat', { token: writers[0] as string, body: { body: `final ${i}` } });
      expect(a.status).toBe(200);
    }
    const db = postgres(pg.url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    const rows = await db<{ seq: number; body: string }[]>`SELECT seq::float8 AS seq, body FROM chat_messages ORDER BY seq`;
    const last = rows.at(-1)?.seq ?? 0;
    await waitFor(() => subscribers.every((s) => s.seqs.at(-1) === last), 30_000, 'every subscriber at the last message').catch(
      (e: Error) => {
        // Where each one stands, to tell a stuck node from a stuck socket when this fails.
        const at = subscribers.map((s) => ({ node: s.node, connected: s.connected, last: s.seqs.at(-1), seen: s.seqs.length }));
        throw new Error(`${e.message}: last ${last}, subscribers ${JSON.stringify(at)}`);
      },
    );
    for (const s of subscribers) s.stop();
    await Promise.all(subscribing);

    // Nothing acknowledged lost, nothing doubled, nothing stored that no client was told of.
    const byBody = new Map<string, number>();
    for (const r of rows) byBody.set(r.body, (byBody.get(r.body) ?? 0) + 1);
    for (const a of acked) expect(byBody.get(a.body), `acknowledged ${a.body}`).toBe(1);
    const soakRows = rows.filter((r) => /^w\d+-/.test(r.body));
    expect(soakRows.length).toBe(acked.length);
    // Credits conserved: sum(balances) + sum(escrow) = 1000 x members.
    const [credits] = await db<{ held: number; members: number }[]>`
      SELECT (SELECT coalesce(sum(balance), 0)::int FROM ledger_accounts WHERE kind IN ('identity', 'escrow')) AS held,
             (SELECT count(*)::int FROM identities) AS members`;
    expect(credits?.held).toBe(1000 * (credits?.members ?? 0));
    const [approved] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM tasks WHERE state = 'approved'`;
    expect(approved?.n).toBe(figures.approvals);
    await db.end();
    // Each subscriber: every message once, in order, none missing after it first subscribed.
    for (const s of subscribers) {
      expect(s.seqs).toEqual([...new Set(s.seqs)].sort((x, y) => x - y));
      const first = s.seqs[0] ?? 0;
      expect(s.seqs).toEqual(rows.filter((r) => r.seq >= first).map((r) => r.seq));
    }
    expect(fiveHundreds).toEqual([]);
    expect(figures.unanswered).toBe(0);
    console.log(JSON.stringify({ figures: 'chaos-soak', seconds: SOAK_S, ...figures, messages: rows.length }));
  },
  (SOAK_S + 240) * 1000,
);
