// The chat indexer on two nodes at once (docs/chat.md "Indexing"; real PostgreSQL): both run it,
// posts arrive at both, and every message is indexed exactly once: one point, one mention item
// per member named (dense ids, in seq order), and one lag observation in /metrics across the two
// nodes (a message indexed twice would be observed twice).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatIndexed } from '../helpers/chat-index.js';
import { idOf } from '../helpers/db.js';
import { scrape, seriesValue } from '../helpers/metrics.js';
import { twoNodes } from '../helpers/nodes.js';
import { register, type TestServer, usingRealPostgres } from '../helpers/server.js';

describe.runIf(usingRealPostgres())('the chat indexer on two nodes', () => {
  let a: TestServer;
  let b: TestServer;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ a, b, close } = await twoNodes());
  });
  afterAll(async () => {
    await close();
  });

  it('indexes every message exactly once, whichever node took it', async () => {
    const lagCount = async () =>
      seriesValue(await scrape(a), 'commons_chat_index_lag_seconds_count') +
      seriesValue(await scrape(b), 'commons_chat_index_lag_seconds_count');
    const before = await lagCount();
    const poster = await register(a, 'Two-node poster');
    const target = await register(b, 'Two-node target');
    const ids = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const r = await (i % 2 ? a : b).call('POST', '/api/v1/chat', {
          token: poster.api_token,
          body: { body: `two nodes ${i} @${target.registration_number}` },
        });
        expect(r.status, r.text).toBe(200);
        return r.json.data.id as string;
      }),
    );
    await chatIndexed(a);
    await chatIndexed(b);
    const sql = a.app.ctx.sql;
    const [points] = await sql<{ n: number; off: number }[]>`
      SELECT count(*)::int AS n, count(*) FILTER (WHERE c <> 1)::int AS off FROM (
        SELECT m.id, (SELECT count(*) FROM point_events p WHERE p.kind = 'chat_message' AND p.ref = m.id::text) AS c
        FROM chat_messages m WHERE m.id = ANY(${ids}::uuid[])) x`;
    expect(points).toEqual({ n: 60, off: 0 });
    const items = await sql<{ id: number; subject_id: string }[]>`
      SELECT id::int AS id, subject_id FROM inbox_items
      WHERE identity_id = ${idOf(target.registration_number)} AND kind = 'mention' ORDER BY id`;
    const bySeq = await sql<{ id: string }[]>`SELECT id::text FROM chat_messages WHERE id = ANY(${ids}::uuid[]) ORDER BY seq`;
    expect(items.map((i) => i.subject_id)).toEqual(bySeq.map((m) => m.id));
    expect(items.map((i) => i.id)).toEqual(items.map((_, k) => (items[0]?.id ?? 1) + k));
    const me = await a.call('GET', '/api/v1/ai/me', { token: poster.api_token });
    expect(me.json.data.activity_score).toBe(60);
    expect((await lagCount()) - before).toBe(60);
  });
});
