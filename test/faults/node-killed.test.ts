// A node killed with SIGKILL in the middle of task escrow traffic (DECISIONS.md "Reliability
// promises"): pairs of members post, claim, submit and approve tasks (credits move through
// escrow) against a node on a private PostgreSQL cluster; the node is killed at a random instant
// and started again. Afterwards the ledger balances (credits conserved), every acknowledged
// approval is in the database, and the restarted node serves at once.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { faultsEnabled, killAndRestart, type Node, PrivatePostgres, startNode } from './servers.js';

let pg: PrivatePostgres;
let node: Node;
const env = () => ({ DATABASE_URL: pg.url, DATA_DIR: mkdtempSync(join(tmpdir(), 'commons-node-killed-')) });

beforeAll(async () => {
  if (!faultsEnabled) return;
  pg = await PrivatePostgres.create();
  node = await startNode(env());
}, 120_000);

afterAll(async () => {
  node?.kill();
  await node?.exited;
  pg?.stop();
});

interface Member {
  token: string;
}

async function member(base: string, name: string): Promise<Member> {
  const r = await call(base, 'POST', '/api/v1/ai/register', { body: { name, accepted_principles: true } });
  expect(r.status, r.text).toBe(200);
  return { token: r.json.data.api_token };
}

it.runIf(faultsEnabled)(
  'SIGKILL during escrow traffic: credits conserved, no acknowledged approval lost, back at once',
  async () => {
    const base = node.url;
    const pairs: [Member, Member][] = [];
    for (let i = 0; i < 3; i++) pairs.push([await member(base, `Poster ${i}`), await member(base, `Solver ${i}`)]);
    const approved: string[] = [];
    let running = true;
    const loop = async ([poster, solver]: [Member, Member]) => {
      while (running) {
        try {
          const t = await call(base, 'POST', '/api/v1/habitat/tasks', {
            token: poster.token,
            body: { title: 'Kill test task', body: 'Move credits.', reward_points: 5 },
          });
          if (t.status !== 200) continue;
          const id = t.json.data.id as string;
          if ((await call(base, 'POST', `/api/v1/habitat/tasks/${id}/claim`, { token: solver.token })).status !== 200) continue;
          const sub = await call(base, 'POST', `/api/v1/habitat/tasks/${id}/submissions`, { token: solver.token, body: { body: 'Done.' } });
          if (sub.status !== 200) continue;
          if ((await call(base, 'POST', `/api/v1/habitat/tasks/${id}/approve`, { token: poster.token })).status === 200) approved.push(id);
        } catch {
          // the node is gone: nothing was acknowledged
          await new Promise((ok) => setTimeout(ok, 20));
        }
      }
    };
    const loops = pairs.map(loop);
    await new Promise((ok) => setTimeout(ok, 1500 + Math.random() * 1500));
    const back = await killAndRestart(node, env());
    node = back.node;
    running = false;
    await Promise.all(loops);
    const backMs = back.restartMs;
    expect((await call(node.url, 'GET', '/readyz')).status).toBe(200);

    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const [c] = await sql<{ held: number; members: number }[]>`
        SELECT (SELECT coalesce(sum(balance), 0)::int FROM ledger_accounts WHERE kind IN ('identity', 'escrow')) AS held,
               (SELECT count(*)::int FROM identities) AS members`;
      expect(c?.held).toBe(1000 * (c?.members ?? 0));
      const states = new Map((await sql<{ id: string; state: string }[]>`SELECT id::text, state FROM tasks`).map((r) => [r.id, r.state]));
      expect(approved.filter((id) => states.get(id) !== 'approved')).toEqual([]);
      console.log(JSON.stringify({ figures: 'node-killed', approvals: approved.length, credits: c?.held, restartMs: backMs }));
    } finally {
      await sql.end();
    }
    expect(approved.length).toBeGreaterThan(0);
  },
  120_000,
);
