// Graceful stop under load (DECISIONS.md "Reliability promises"): SIGTERM while four writers post
// chat, memory, heartbeats and tasks. In-flight requests are drained first (new ones on open
// connections get 503 + Retry-After), then the actors stop (the last heartbeat flush), then the
// store closes; the process exits 0 and every acknowledged write, and the last acknowledged
// heartbeat, is in the database. The node runs embedded (the default deployment) as a child
// process started with `node --import tsx src/main.ts`.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.js';
import { expectServerErrors } from '../helpers/contract-gate.js';
import { templateDir } from '../helpers/global-setup.js';
import { call } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { MixedLoad, type Writer } from './load.js';
import { startNode } from './servers.js';

const dir = mkdtempSync(join(tmpdir(), 'commons-graceful-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('SIGTERM under load: drained, exit 0, nothing acknowledged lost', async () => {
  expectServerErrors(); // DECISIONS.md "Reliability promises": 503s are the point here
  cpSync(templateDir(), dir, { recursive: true });
  const node = await startNode({ DATA_DIR: dir, DATABASE_URL: '', REDIS_URL: '' });
  const ws: Writer[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await call(node.url, 'POST', '/api/v1/ai/register', { body: { name: `Stop writer ${i}`, accepted_principles: true } });
    expect(r.status, r.text).toBe(200);
    ws.push({ token: r.json.data.api_token, id: Number(String(r.json.data.registration_number).slice(3)) });
  }
  const load = new MixedLoad(node.url, ws);
  load.start();
  // Stopped in the middle of real traffic: once 60 writes have been acknowledged (about 1 s).
  await waitFor(() => load.answers.filter((a) => a.status === 200).length >= 60, 30_000, 'the load under way');
  const termAt = Date.now();
  node.kill('SIGTERM');
  const code = await node.exited;
  const exitedAt = Date.now();
  await load.stop();
  expect(code, node.log().slice(-2000)).toBe(0);

  // Answers were 200, or 503 for requests that arrived while stopping; refused connections after
  // the exit (status -1) were never acknowledged.
  const answered = load.answers.filter((a) => a.status > 0);
  expect(answered.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
  expect(load.answers.filter((a) => a.status === 0)).toEqual([]);
  expect(answered.filter((a) => a.status === 200).length).toBeGreaterThan(0);

  const store = await openStore({ dataDir: dir });
  try {
    const sql = store.sql;
    const bodies = new Set((await sql<{ body: string }[]>`SELECT body FROM chat_messages`).map((r) => r.body));
    const titles = new Set((await sql<{ title: string }[]>`SELECT title FROM tasks`).map((r) => r.title));
    const held = new Map(
      (await sql<{ identity_id: number; key: string; value: number }[]>`SELECT identity_id::int, key, value FROM memory`).map((r) => [
        `${r.identity_id}|${r.key}`,
        Number(r.value),
      ]),
    );
    expect({
      chat: load.acknowledged('chat').filter((t) => !bodies.has(`fault load ${t}`)),
      task: load.acknowledged('task').filter((t) => !titles.has(`Task ${t}`)),
      memory: load.acknowledged('memory').filter((m) => {
        const [id, key, seq] = m.split('|');
        return !((held.get(`${id}|${key}`) ?? -1) >= Number(seq));
      }),
    }).toEqual({ chat: [], task: [], memory: [] });
    for (const [i, w] of ws.entries()) {
      const last = load
        .acknowledged('heartbeat')
        .filter((t) => t.startsWith(`w${i}-`))
        .at(-1);
      const [row] = await sql<{ n: string | null }[]>`SELECT status_note AS n FROM identities WHERE id = ${w.id}`;
      expect(Number(row?.n?.split('-')[1] ?? -1)).toBeGreaterThanOrEqual(Number(last?.split('-')[1]));
    }
  } finally {
    await store.close();
  }
  console.log(
    JSON.stringify({
      figures: 'graceful-stop',
      requests: load.answers.length,
      byStatus: load.byStatus(),
      afterSigterm: load.byStatus(termAt),
      stopMs: exitedAt - termAt,
    }),
  );
}, 120_000);
