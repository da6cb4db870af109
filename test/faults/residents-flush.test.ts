// A heartbeat flush that fails (DECISIONS.md "Reliability promises"): the heartbeats it held are
// kept and written by a later flush once the database accepts writes again; one failure must not
// stop every later flush until a restart. Runs on both backends (the failure is real: the table
// the flush writes to is renamed away for a moment).
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Residents } from '../../src/actors/residents.js';
import { presenceOf } from '../../src/domain/presence.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const noteOf = async (id: number) => {
  const [r] = await s.app.ctx.sql<{ status_note: string | null }[]>`SELECT status_note FROM identities WHERE id = ${id}`;
  return r?.status_note ?? null;
};

it('a failed flush keeps its heartbeats and the next flush writes them', async () => {
  const a = await register(s, 'Flush A');
  const id = Number(a.registration_number.slice(3));
  expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token, body: { status_note: 'first' } })).status).toBe(200);
  const residents = presenceOf(s.app.ctx) as Residents;
  await residents.flush();
  expect(await noteOf(id)).toBe('first');

  await s.app.ctx.sql`ALTER TABLE identities RENAME TO identities_away`;
  try {
    await residents.heartbeat(id, s.app.ctx.clock.now(), 'while the table is away');
    await expect(residents.flush()).rejects.toThrow();
  } finally {
    await s.app.ctx.sql`ALTER TABLE identities_away RENAME TO identities`;
  }
  // Nothing new was written while it failed.
  expect(await noteOf(id)).toBe('first');
  await expect(residents.flush()).resolves.toBeUndefined();
  expect(await noteOf(id)).toBe('while the table is away');
  // And the ticks go on writing.
  await residents.heartbeat(id, s.app.ctx.clock.now(), 'after');
  await expect.poll(() => noteOf(id), { timeout: 10_000 }).toBe('after');
});
