// A chat post's author and a point's owner name an identity, checked once per statement
// (sql/037_identity_refs_by_statement.sql): chat_append checks every member author of its group in
// one query, and a point event's identity is checked through its scores row (identity_scores keeps
// its foreign key). What the foreign keys they replaced refused is still refused (23503); what they
// did beside it, a lock on the author's identity row taken by every post in flight and by every
// indexer step (FOR KEY SHARE, one check a row), is gone.
import { randomUUID } from 'node:crypto';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAT_INDEX_BATCH } from '../../src/domain/chat.js';
import * as store from '../../src/store/chat.js';
import { countRows, idOf } from '../helpers/db.js';
import { register, startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  // The indexer is run by the test, inside a transaction it holds open.
  s = await startTestServer({ CHAT_INDEXER: 'off' });
});
afterAll(async () => {
  await s.close();
});

const byMember = (authorId: number, body: string): store.NewChatRow => ({
  id: randomUUID(),
  body,
  authorId,
  guestNumber: null,
  guestLabel: null,
  at: new Date(),
  mentions: [],
});
const code = (p: Promise<unknown>) =>
  p.then(
    () => 'stored',
    (err: { code?: string }) => err.code ?? String(err),
  );

describe('authors name identities', () => {
  it('a post by a member id that names no identity is refused with the whole group, as the foreign key did', async () => {
    const me = idOf((await register(s, 'Author')).registration_number);
    const before = await countRows(s, 'chat_messages');
    const nobody = 9_000_000 + me;
    expect(await code(store.insertMessages(s.app.ctx.sql, [byMember(me, 'mine'), byMember(nobody, 'no one')]))).toBe('23503');
    expect(await countRows(s, 'chat_messages')).toBe(before);
    const [stored] = await store.insertMessages(s.app.ctx.sql, [byMember(me, 'mine, alone')]);
    expect(stored?.seq).toBeGreaterThan(0);
  });

  it('a point naming no identity is refused (its scores row keeps the foreign key)', async () => {
    const me = idOf((await register(s, 'Scorer')).registration_number);
    expect(await code(s.app.ctx.sql`INSERT INTO point_events (identity_id, kind, points) VALUES (${9_000_000 + me}, 'post', 1)`)).toBe(
      '23503',
    );
    expect(await code(s.app.ctx.sql`INSERT INTO point_events (identity_id, kind, points) VALUES (${me}, 'post', 1)`)).toBe('stored');
  });

  // What the rows above name stays (sql/038_identities_permanent.sql): a member with posts and no
  // other row that refers to it (no points, no inbox) could otherwise be deleted under its posts.
  it('an identity is never deleted, truncated nor given another id (42501), its posts keep their author', async () => {
    const me = idOf((await register(s, 'Kept')).registration_number);
    await store.insertMessages(s.app.ctx.sql, [byMember(me, 'still mine')]);
    const sql = s.app.ctx.sql;
    expect(await code(sql`DELETE FROM identities WHERE id = ${me}`)).toBe('42501');
    expect(await code(sql`UPDATE identities SET id = ${9_000_000 + me} WHERE id = ${me}`)).toBe('42501');
    expect(await code(sql`TRUNCATE identities CASCADE`)).toBe('42501');
    const [row] =
      await sql`SELECT count(*)::int AS n FROM chat_messages m JOIN identities i ON i.id = m.author_id WHERE m.author_id = ${me}`;
    expect(row?.n).toBe(1);
  });
});

// Two transactions at once need a real PostgreSQL (PGlite serves one connection at a time).
describe.runIf(usingRealPostgres())('no lock on the author while its posts are in flight', () => {
  /** Runs `work` in a transaction held open, then asks, from another connection, for the author's
   * identity row FOR UPDATE NOWAIT (which a foreign key's FOR KEY SHARE would refuse: 55P03). */
  async function lockFreeWhile(authorId: number, work: (tx: Sql) => Promise<unknown>): Promise<string> {
    let release: () => void = () => {};
    const held = new Promise<void>((ok) => {
      release = ok;
    });
    let ran: () => void = () => {};
    const done = new Promise<void>((ok) => {
      ran = ok;
    });
    const tx = s.app.ctx.sql.begin(async (t) => {
      await work(t as unknown as Sql);
      ran();
      await held;
      throw new Error('rolled back (test)');
    });
    await done;
    try {
      return await code(s.app.ctx.sql`SELECT 1 FROM identities WHERE id = ${authorId} FOR UPDATE NOWAIT`);
    } finally {
      release();
      await tx.catch(() => {});
    }
  }

  it('a group in its commit holds no lock on its member authors', async () => {
    const me = idOf((await register(s, 'Writer')).registration_number);
    const free = await lockFreeWhile(me, (tx) => store.insertMessages(tx, [byMember(me, 'in flight'), byMember(me, 'also')]));
    expect(free).toBe('stored');
  });

  it('an indexer step in its commit holds no lock on the scored authors whose points it writes', async () => {
    const me = idOf((await register(s, 'Indexed')).registration_number);
    // A first point gives the author its scores row (checked against identities once, locked then).
    await store.insertMessages(s.app.ctx.sql, [byMember(me, 'first, indexed')]);
    while ((await store.indexNext(s.app.ctx.sql, CHAT_INDEX_BATCH, 'http://test/api/v1/chat')).indexed > 0) {}
    await store.insertMessages(s.app.ctx.sql, [byMember(me, 'to be indexed'), byMember(me, 'and this')]);
    const free = await lockFreeWhile(me, async (tx) => {
      const step = await store.indexNext(tx, CHAT_INDEX_BATCH, 'http://test/api/v1/chat');
      expect(step.indexed).toBeGreaterThan(0);
    });
    expect(free).toBe('stored');
  });
});
