// Memory writes are grouped (src/domain/memory.ts openMemoryWrites, sql/026_memory_put_many.sql):
// writes that arrive while one is committing share the next statement and commit. Each writer is
// answered with its own write, the 200-key cap holds inside a group as across groups, and nothing
// beyond the written keys is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idOf } from '../helpers/db.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { watchStatements, watchSubmits } from '../helpers/statements.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const put = (token: string, key: string, value: unknown) => s.call('POST', '/api/v1/memory', { token, body: { key, value } });

async function stored(owner: string): Promise<Map<string, unknown>> {
  const rows = await s.app.ctx.sql<{ key: string; value: unknown }[]>`SELECT key, value FROM memory WHERE identity_id = ${idOf(owner)}`;
  return new Map(rows.map((r) => [r.key, r.value]));
}

describe('grouped memory writes', () => {
  it('writes queued behind a commit share one statement; each is answered as its own, and the cap holds inside the group', async () => {
    const [a, b, c] = await Promise.all(['Grouped A', 'Grouped B', 'Grouped C'].map((n) => register(s, n)));
    if (!a || !b || !c) throw new Error('registration failed');
    // A already holds 198 keys: two more fit. By SQL: 198 writes through the API would only slow
    // the test (memory writes are tested one by one in memory.test.ts).
    await s.app.ctx.sql`INSERT INTO memory (identity_id, key, value, size_bytes, created_at, updated_at)
      SELECT ${idOf(a.registration_number)}, 'f' || g, '1'::jsonb, 1, now(), now() FROM generate_series(1, 198) AS g`;
    const w = watchStatements(s.app.ctx.sql, 'memory_put_many');
    const asked = watchSubmits(s.app.ctx, 'memoryPuts');
    try {
      const release = w.holdNext();
      const first = put(b.api_token, 'warm', 0);
      await waitFor(() => w.answered() === 1, 5000, 'the first write committed');
      // While its answer is held on the way back, fifteen writes of three members queue: each is
      // in the group's queue once it was submitted (an event, not a pause), and no statement more
      // was sent for them.
      const full = Array.from({ length: 5 }, (_, i) => put(a.api_token, `new${i}`, i));
      const shared = Array.from({ length: 4 }, (_, i) => put(b.api_token, 'shared', { n: i }));
      const own = Array.from({ length: 6 }, (_, i) => put(c.api_token, `c${i}`, `value ${i}`));
      await waitFor(() => asked.count() === 16, 10_000, 'the fifteen writes queued');
      expect(w.count()).toBe(1);
      release();
      expect((await first).status).toBe(200);
      const [fullAnswers, sharedAnswers, ownAnswers] = await Promise.all([Promise.all(full), Promise.all(shared), Promise.all(own)]);
      // One statement per write without grouping (16); grouped, the fifteen that were all queued
      // when the first commit ended went together: one statement more.
      expect(w.count()).toBe(2);

      // The cap: two of A's five new keys fit, three are refused, and A holds exactly 200.
      expect(fullAnswers.map((r) => r.status).sort()).toEqual([200, 200, 409, 409, 409]);
      for (const r of fullAnswers.filter((x) => x.status === 409)) expect(r.json.error.code).toBe('MEMORY_FULL');
      const aKeys = await stored(a.registration_number);
      expect(aKeys.size).toBe(200);
      for (const r of fullAnswers.filter((x) => x.status === 200)) {
        expect(r.json.data.created).toBe(true);
        expect(aKeys.get(r.json.data.key)).toEqual(r.json.data.value);
      }

      // One key written four times in one group: created once, each answer shows its own value,
      // and the stored value is one of them.
      sharedAnswers.forEach((r, i) => {
        expect(r.status, r.text).toBe(200);
        expect(r.json.data).toMatchObject({ key: 'shared', value: { n: i } });
      });
      expect(sharedAnswers.filter((r) => r.json.data.created === true)).toHaveLength(1);
      const bKeys = await stored(b.registration_number);
      expect([...bKeys.keys()].sort()).toEqual(['shared', 'warm']);
      expect(sharedAnswers.map((r) => r.json.data.value)).toContainEqual(bKeys.get('shared'));

      // Distinct keys: each created with its own value, and nothing else stored.
      ownAnswers.forEach((r, i) => {
        expect(r.status, r.text).toBe(200);
        expect(r.json.data).toMatchObject({ key: `c${i}`, value: `value ${i}`, created: true });
      });
      expect(await stored(c.registration_number)).toEqual(new Map(ownAnswers.map((_, i) => [`c${i}`, `value ${i}`])));
    } finally {
      w.restore();
      asked.restore();
    }
  });
});
