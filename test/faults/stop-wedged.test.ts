// Shutdown is bounded (DECISIONS.md "Every door, the same rules"): SIGTERM ends the process within
// 10 s whatever the store is doing. Here the store is wedged (the node's private PostgreSQL stopped
// with SIGSTOP: connections open, nothing ever answered) with requests waiting on it; the process
// must still exit, with 1 since it had to cut its stop short. Real PostgreSQL (the fault suite's
// own cluster), the node as a child process.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectServerErrors } from '../helpers/contract-gate.js';
import { call } from '../helpers/server.js';
import { faultsEnabled, type Node, PrivatePostgres, startNode } from './servers.js';

let pg: PrivatePostgres | undefined;
let node: Node | undefined;
beforeAll(async () => {
  if (!faultsEnabled) return;
  pg = await PrivatePostgres.create();
  node = await startNode({ DATABASE_URL: pg.url, REDIS_URL: '' });
}, 120_000);
afterAll(async () => {
  pg?.thaw();
  node?.kill('SIGKILL');
  pg?.stop();
});

it.runIf(faultsEnabled)(
  'SIGTERM with the store wedged and requests waiting on it: the process ends within 10 s, exit 1',
  async () => {
    expectServerErrors(); // requests cut short by the stop answer 503 or not at all: the point here
    const n = node as Node;
    const r = await call(n.url, 'POST', '/api/v1/ai/register', { body: { name: 'Before the wedge', accepted_principles: true } });
    expect(r.status, r.text).toBe(200);
    pg?.freeze();
    // Requests that wait on the wedged store (their answers, if any, do not matter here).
    const waiting = Array.from({ length: 5 }, (_, i) =>
      call(n.url, 'POST', '/api/v1/chat', { token: r.json.data.api_token, body: { body: `wedged ${i}` } }).catch(() => null),
    );
    const termAt = Date.now();
    n.kill('SIGTERM');
    const code = await n.exited;
    const tookMs = Date.now() - termAt;
    expect({ code, within10s: tookMs <= 10_000 }, `${tookMs} ms\n${n.log().slice(-1500)}`).toEqual({ code: 1, within10s: true });
    expect(n.log()).toContain('stop cut short');
    pg?.thaw();
    await Promise.all(waiting);
  },
  60_000,
);

it.runIf(faultsEnabled)(
  'SIGTERM as the node says it listens, its actors still starting, with the store wedged: exit 1 within 10 s, said as the stop cut short',
  async () => {
    // The node's actors start after "commons listening" and need the store: wedged at once, their
    // start fails while the stop waits for it, which is the stop cut short, not a failed start.
    pg?.thaw();
    const early = await startNode({ DATABASE_URL: (pg as PrivatePostgres).url, REDIS_URL: '' }, 'early');
    try {
      pg?.freeze();
      const termAt = Date.now();
      early.kill('SIGTERM');
      const code = await early.exited;
      const tookMs = Date.now() - termAt;
      expect({ code, within10s: tookMs <= 10_000 }, `${tookMs} ms\n${early.log().slice(-1500)}`).toEqual({ code: 1, within10s: true });
      expect(early.log()).toContain('stop cut short');
      expect(early.log()).not.toContain('failed to start');
    } finally {
      pg?.thaw();
      early.kill('SIGKILL');
    }
  },
  60_000,
);
