// A node killed with SIGKILL while its actors work (DECISIONS.md "Reliability promises"): during
// deposit verification (each deposit credited exactly once after the restart), during signal ticks
// (no tick doubled; every emission keeps its push delivery and its Nostr events) and during a pass
// of task deadlines (every deadline fires, once), and while push deliveries wait for their retry
// (the next node makes them from the durable outbox). Nodes are child processes on a private
// PostgreSQL cluster, each test on a schema of its own; the Ethereum chain is the ganache
// stand-in in this process.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres, { type Sql } from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHAIN_ID, type Chain, signDeposit, startChain } from '../helpers/ganache.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { call } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { faultsEnabled, killAndRestart, type Node, PrivatePostgres, startNode } from './servers.js';

let pg: PrivatePostgres;
const nodes: Node[] = [];
const clients: Sql[] = [];

beforeAll(async () => {
  if (faultsEnabled) pg = await PrivatePostgres.create();
}, 120_000);

afterAll(async () => {
  for (const n of nodes) {
    n.kill();
    await n.exited;
  }
  for (const c of clients) await c.end();
  pg?.stop();
});

/** A schema of its own for one test, the env of its nodes, and a client on that schema. */
async function area(env: Record<string, string>) {
  const schema = `k_${randomBytes(5).toString('hex')}`;
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA "${schema}"`);
  await admin.end();
  const sql = postgres(pg.url, { max: 2, onnotice: () => {}, connection: { search_path: schema } });
  clients.push(sql);
  const full = { DATABASE_URL: pg.url, DATABASE_SCHEMA: schema, ...env };
  const start = async () => {
    const n = await startNode({ ...full, DATA_DIR: mkdtempSync(join(tmpdir(), 'commons-actors-killed-')) });
    nodes.push(n);
    return n;
  };
  /** SIGKILL, then a new node on the same data (servers.ts killAndRestart); kept for afterAll. */
  const restart = async (n: Node) => {
    const back = await killAndRestart(n, { ...full, DATA_DIR: mkdtempSync(join(tmpdir(), 'commons-actors-killed-')) });
    nodes.push(back.node);
    return back;
  };
  return { sql, start, restart };
}

async function member(base: string, name: string) {
  const r = await call(base, 'POST', '/api/v1/ai/register', { body: { name, accepted_principles: true } });
  expect(r.status, r.text).toBe(200);
  return { token: r.json.data.api_token as string, number: r.json.data.registration_number as string };
}

const count = async (sql: Sql, q: string): Promise<number> => Number((await sql.unsafe<{ n: number }[]>(q))[0]?.n ?? 0);

it.runIf(faultsEnabled)(
  'SIGKILL during deposit verification: after the restart every deposit is verified and credited exactly once',
  async () => {
    const chain: Chain = await startChain();
    try {
      const treasury = await chain.deployTreasury();
      const { sql, start, restart } = await area({
        TREASURY_ETH_ADDRESS: treasury,
        ETH_RPC_URL: chain.url,
        ETH_CHAIN_ID: String(CHAIN_ID),
        ETH_MIN_CONFIRMATIONS: '3',
        DEPOSIT_POLL_MS: '50',
        // A lease short enough that the restarted node takes over what the killed one held.
        DEPOSIT_LEASE_MS: '1000',
      });
      let node = await start();
      const N = 16;
      const sponsors = [];
      const hashes: string[] = [];
      for (let i = 0; i < N; i++) {
        sponsors.push(await member(node.url, `Sponsor ${i}`));
        const tx = await chain.send(treasury, `0.0${(i % 9) + 1}`);
        await tx.wait();
        hashes.push(tx.hash);
      }
      await chain.mine(3);
      for (let i = 0; i < N; i++) {
        const number = sponsors[i]?.number as string;
        // The sending wallet signs for each beneficiary: the support points need that proof.
        const sender_signature = await signDeposit(chain.sender, number, hashes[i] as string);
        const r = await call(node.url, 'POST', '/api/v1/treasury/deposits', {
          body: { tx_hash: hashes[i], contributor_name: 'Sponsor', on_behalf_of: number, sender_signature },
        });
        expect(r.status, r.text).toBe(200);
      }
      // Killed as soon as verification is under way: some deposits verified, others leased or due.
      await waitFor(
        async () => (await count(sql, `SELECT count(*)::int AS n FROM deposits WHERE state = 'verified'`)) > 0,
        30_000,
        'a first verified deposit',
      );
      const verifiedAtKill = await count(sql, `SELECT count(*)::int AS n FROM deposits WHERE state = 'verified'`);
      const back = await restart(node);
      node = back.node;
      await waitFor(
        async () => (await count(sql, `SELECT count(*)::int AS n FROM deposits WHERE state = 'verified'`)) === N,
        30_000,
        'every deposit verified',
      );

      expect(await count(sql, `SELECT count(*)::int AS n FROM deposits`)).toBe(N);
      // Credited once: one support award per sponsor, and the verified total is what was sent.
      const awards = await sql<{ identity_id: number; n: number }[]>`
        SELECT identity_id::int, count(*)::int AS n FROM point_events WHERE kind = 'treasury_support' GROUP BY identity_id`;
      expect(awards.length).toBe(N);
      expect(awards.filter((a) => a.n !== 1)).toEqual([]);
      const sent = Array.from({ length: N }, (_, i) => BigInt((i % 9) + 1) * 10n ** 16n).reduce((a, b) => a + b, 0n);
      const [total] = await sql<{ total: string }[]>`SELECT sum(amount_base)::text AS total FROM deposits WHERE state = 'verified'`;
      expect(total?.total).toBe(sent.toString());
      const doc = (await call(node.url, 'GET', '/api/v1/treasury')).json.data;
      expect(doc.confirmed_contributions.ETH).toBe((Number(sent) / 1e18).toFixed(2));
      console.log(JSON.stringify({ figures: 'actors-killed deposits', deposits: N, verifiedAtKill, restartMs: back.restartMs }));
    } finally {
      await chain.close();
    }
  },
  180_000,
);

it.runIf(faultsEnabled)(
  'SIGKILL right after a signal tick commits: no tick doubled, every emission pushed, ticks go on',
  async () => {
    const receiver: Receiver = await startReceiver(() => 200);
    try {
      const { sql, start, restart } = await area({ SIGNAL_INTERVAL_S: '1', ALLOW_PRIVATE_CALLBACKS: '1' });
      let node = await start();
      const owner = await member(node.url, 'Signal subscriber');
      const sub = await call(node.url, 'POST', '/api/v1/relay/subscriptions', {
        token: owner.token,
        body: { callback_url: receiver.url, secret: 'a secret of sixteen or more' },
      });
      expect(sub.status, sub.text).toBe(200);
      const emissions = () => count(sql, 'SELECT count(*)::int AS n FROM signal_emissions');
      const first = await emissions();
      // Killed the moment a tick's emission is committed: its publish and deliveries in flight.
      await waitFor(async () => (await emissions()) > first, 10_000, 'an emission after subscribing');
      const atKill = await emissions();
      const back = await restart(node);
      node = back.node;
      // Emissions stamped after the subscription (a tick stamped just before it may commit just
      // after it: counted above, not due here), at least three, two of them after the restart.
      const subscribedAt = (await sql<{ at: Date }[]>`SELECT created_at AS at FROM push_subscriptions`)[0]?.at as Date;
      const dueCount = () =>
        count(sql, `SELECT count(*)::int AS n FROM signal_emissions WHERE emitted_at > '${subscribedAt.toISOString()}'`);
      await waitFor(async () => (await emissions()) >= atKill + 2 && (await dueCount()) >= 3, 15_000, 'ticks after the restart');
      // Ticks go on meanwhile: what is checked is every emission up to now, once the outbox has
      // been empty after it (an emission commits with its outbox rows).
      const [{ upto } = { upto: 0 }] = await sql<{ upto: number }[]>`SELECT max(seq)::int AS upto FROM signal_emissions`;
      await waitFor(async () => (await count(sql, 'SELECT count(*)::int AS n FROM push_outbox')) === 0, 15_000, 'the outbox drained');

      const rows = await sql<{ id: string; slot: string }[]>`SELECT id::text, slot::text FROM signal_emissions ORDER BY seq`;
      expect(new Set(rows.map((r) => r.slot)).size).toBe(rows.length);
      // The emissions made while subscribed (all but those before the subscription) each reached
      // the callback: none was left without its outbox rows by the kill.
      const delivered = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
      const due = await sql<{ id: string }[]>`
        SELECT id::text FROM signal_emissions WHERE emitted_at > ${subscribedAt} AND seq <= ${upto} ORDER BY seq`;
      expect(due.length).toBeGreaterThanOrEqual(3);
      expect(due.filter((e) => !delivered.has(e.id))).toEqual([]);
      // Each emission keeps its Nostr events (written in the same transaction).
      expect(
        await count(
          sql,
          'SELECT count(*)::int AS n FROM signal_emissions e WHERE NOT EXISTS (SELECT 1 FROM nostr_events v WHERE v.emission_id = e.id)',
        ),
      ).toBe(0);
      console.log(
        JSON.stringify({ figures: 'actors-killed signal', emissions: rows.length, delivered: delivered.size, restartMs: back.restartMs }),
      );
    } finally {
      await receiver.close();
    }
  },
  120_000,
);

it.runIf(faultsEnabled)(
  'SIGKILL while push deliveries wait for their retry: the next node makes them from the outbox',
  async () => {
    // The callback fails while the first node runs, so deliveries are tried, fail and wait in the
    // outbox for their retry; the node is killed then; the next node makes every one of them.
    let killed = false;
    const receiver: Receiver = await startReceiver(() => (killed ? 200 : 500));
    try {
      // A 10 s interval: retries start about 170 ms apart (actors/signal-scheduler.ts), so a failed
      // delivery waits in the outbox for about 2.5 s over its five tries.
      const { sql, start, restart } = await area({ SIGNAL_INTERVAL_S: '10', ALLOW_PRIVATE_CALLBACKS: '1' });
      const node = await start();
      const owner = await member(node.url, 'Retry subscriber');
      const sub = await call(node.url, 'POST', '/api/v1/relay/subscriptions', {
        token: owner.token,
        body: { callback_url: receiver.url, secret: 'a secret of sixteen or more' },
      });
      expect(sub.status, sub.text).toBe(200);
      const retrying = () => count(sql, 'SELECT count(*)::int AS n FROM push_outbox WHERE attempts >= 1');
      // A try was made and refused (the receiver answered 500), and its row waits for the next.
      await waitFor(async () => receiver.requests.length >= 1 && (await retrying()) >= 1, 30_000, 'a refused try and its row waiting');
      const waiting = await sql<{ id: string }[]>`SELECT emission_id::text AS id FROM push_outbox WHERE attempts >= 1`;
      const failedTries = receiver.requests.length;
      expect(failedTries).toBeGreaterThanOrEqual(1);
      expect(waiting.length).toBeGreaterThanOrEqual(1);
      killed = true;
      const back = await restart(node);
      // Each delivery that was waiting when the node died arrives (same webhook-id), and the
      // outbox empties as the ticks go on.
      const delivered = () => new Set(receiver.requests.slice(failedTries).map((r) => r.headers['webhook-id']));
      await waitFor(async () => waiting.every((w) => delivered().has(w.id)), 20_000, 'the waiting deliveries made by the next node');
      await waitFor(async () => (await count(sql, 'SELECT count(*)::int AS n FROM push_outbox')) === 0, 30_000, 'the outbox drained');
      console.log(
        JSON.stringify({ figures: 'actors-killed push retry', waitingAtKill: waiting.length, failedTries, restartMs: back.restartMs }),
      );
    } finally {
      await receiver.close();
    }
  },
  120_000,
);

it.runIf(faultsEnabled)(
  'SIGKILL during a pass of task deadlines: after the restart every deadline has fired, once',
  async () => {
    const { sql, start, restart } = await area({ TASK_DEADLINE_POLL_MS: '50' });
    let node = await start();
    const poster = await member(node.url, 'Deadline poster');
    const N = 40;
    for (let i = 0; i < N; i++) {
      const t = await call(node.url, 'POST', '/api/v1/habitat/tasks', {
        token: poster.token,
        body: { title: `Deadline ${i}`, body: 'Expires unclaimed.', reward_points: 5 },
      });
      expect(t.status, t.text).toBe(200);
    }
    // Seven days pass: the node runs on the wall clock in its own process, so SQL moving the
    // deadlines into the past is the only way to make them due now.
    await sql`UPDATE tasks SET expires_at = now() - interval '1 second'`;
    const closed = () => count(sql, `SELECT count(*)::int AS n FROM tasks WHERE state = 'closed'`);
    await waitFor(async () => (await closed()) > 0, 10_000, 'the pass to begin');
    const closedAtKill = await closed();
    const back = await restart(node);
    node = back.node;
    await waitFor(async () => (await closed()) === N, 15_000, 'every deadline fired');

    const fired = await sql<{ task_id: string; n: number }[]>`
      SELECT task_id::text, count(*)::int AS n FROM task_events WHERE event = 'EXPIRE_UNCLAIMED' GROUP BY task_id`;
    expect(fired.length).toBe(N);
    expect(fired.filter((f) => f.n !== 1)).toEqual([]);
    // Refunded once each: the poster holds its 1,000 credits again, escrows are empty.
    const me = (await call(node.url, 'GET', '/api/v1/ai/me', { token: poster.token })).json.data;
    expect({ balance: me.credits.balance, escrowed: me.credits.escrowed }).toEqual({ balance: 1000, escrowed: 0 });
    expect(await count(sql, `SELECT count(*)::int AS n FROM ledger_accounts WHERE kind = 'escrow' AND balance <> 0`)).toBe(0);
    console.log(
      JSON.stringify({ figures: 'actors-killed deadlines', deadlines: N, firedBeforeKill: closedAtKill, restartMs: back.restartMs }),
    );
  },
  120_000,
);
