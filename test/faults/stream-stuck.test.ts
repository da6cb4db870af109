// The stream under a stuck database (DECISIONS.md "Reliability promises"; DESIGN.md "One
// credential, one runner"): its upgrade and its ops run within the same per-request deadline as
// every other way in. PostgreSQL's processes are stopped (SIGSTOP), so no statement ever answers:
// a member's `auth` (a token lookup in the database) is answered UNAVAILABLE with retry_after_s 1
// and changes nothing on the session, and a member's upgrade is refused 503 with Retry-After.
// Without the deadline neither would ever be answered while the database is stopped (the test's
// own timeout would fail it): no time bound is asserted. Both work again once it runs. A node of
// its own on a private cluster.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectServerErrors } from '../helpers/contract-gate.js';
import { call } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';
import { faultsEnabled, type Node, PrivatePostgres, startNode } from './servers.js';

let pg: PrivatePostgres;
let node: Node;
let frozen = false;

beforeAll(async () => {
  if (!faultsEnabled) return;
  pg = await PrivatePostgres.create();
  node = await startNode({ DATABASE_URL: pg.url, DATA_DIR: mkdtempSync(join(tmpdir(), 'commons-fault-node-')) });
}, 120_000);

afterAll(async () => {
  if (frozen) pg.thaw();
  node?.kill();
  await node?.exited;
  pg?.stop();
});

it.runIf(faultsEnabled)(
  "database stopped: a member's stream auth answers UNAVAILABLE and a member's upgrade 503, then both work again",
  async () => {
    expectServerErrors(); // DECISIONS.md "Reliability promises": 503s are the point here
    const r = await call(node.url, 'POST', '/api/v1/ai/register', { body: { name: 'Stuck streamer', accepted_principles: true } });
    expect(r.status, r.text).toBe(200);
    const token = r.json.data.api_token as string;
    const number = r.json.data.registration_number as string;
    // A session opened before the freeze, still a guest's.
    const c = await StreamClient.open(node.url);
    expect(c.hello.guest).toBeDefined();

    pg.freeze();
    frozen = true;
    // Generous waits: only the deadline can answer these while the database is stopped.
    const started = Date.now();
    const auth = await c.request('auth', { token }, 60_000);
    const authMs = Date.now() - started;
    expect(auth.op).toBe('error');
    expect(auth.error).toMatchObject({ code: 'UNAVAILABLE', retry_after_s: 1 });
    const upgrade = await StreamClient.open(node.url, { token }).then(
      (s) => {
        s.close();
        return 'open';
      },
      (err: Error) => err.message,
    );
    const upgradeMs = Date.now() - started - authMs;
    expect(upgrade).toBe('upgrade refused: 503');
    // The late `auth` changed nothing: the session is still the guest's (a ping answers at once).
    expect((await c.request('ping')).op).toBe('pong');

    pg.thaw();
    frozen = false;
    await waitFor(async () => (await call(node.url, 'GET', '/readyz')).status === 200, 30_000, 'readyz 200 after the thaw');
    const again = await c.request('auth', { token }, 30_000);
    expect(again.op, JSON.stringify(again)).toBe('ack');
    expect(again.data.registration_number).toBe(number);
    const opened = await StreamClient.open(node.url, { token });
    expect(opened.hello.registration_number).toBe(number);
    opened.close();
    c.close();
    console.log(JSON.stringify({ figures: 'stream-stuck', authMs, upgradeMs }));
  },
  180_000,
);
