// sql/035_idempotency_sealed.sql over a database of the release before it, on embedded PGlite and
// a real PostgreSQL: the rows kept with their Idempotency-Key and answer in the clear (an
// api_token among them) are dropped; the table then takes only the sealed form, and a row in the
// clear form that a node of the previous release writes during a rolling upgrade is accepted and
// then removed by the reaper's next sweep.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.js';
import { reapAnswers } from '../../src/store/idempotency.js';
import { migrate, SQL_DIR } from '../../src/store/migrate.js';

/** sql/ as the previous release had it: every migration before 035, and the function files. */
function previousRelease(): string {
  const dir = mkdtempSync(join(tmpdir(), 'commons-sql-034-'));
  for (const f of readdirSync(SQL_DIR)) if (/^\d{3}_/.test(f) && Number(f.slice(0, 3)) < 35) cpSync(join(SQL_DIR, f), join(dir, f));
  mkdirSync(join(dir, 'functions'));
  cpSync(join(SQL_DIR, 'functions'), join(dir, 'functions'), { recursive: true });
  return `${dir}/`;
}

/** The migrations a database of that release takes: 035 and every later one. */
const fromOn35 = (): number[] =>
  readdirSync(SQL_DIR)
    .filter((f) => /^\d{3}_/.test(f) && Number(f.slice(0, 3)) >= 35)
    .map((f) => Number(f.slice(0, 3)))
    .sort((x, y) => x - y);

const backends = [
  { name: 'pglite', real: false },
  { name: 'postgres', real: true },
];

for (const { name, real } of backends)
  describe.skipIf(real && !process.env.DATABASE_URL)(`sql/035 on ${name}`, () => {
    let store: Store;
    let dir: string;
    let sqlDir: string;
    const schema = `m_${randomBytes(6).toString('hex')}`;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'commons-mig-'));
      sqlDir = previousRelease();
      store = await openStore({
        dataDir: dir,
        databaseUrl: real ? process.env.DATABASE_URL : undefined,
        schema: real ? schema : undefined,
      });
      await migrate(store.sql, sqlDir);
    }, 120_000);
    afterAll(async () => {
      await store?.close();
      if (real) {
        const admin = postgres(process.env.DATABASE_URL as string, { max: 1, onnotice: () => {} });
        await admin.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
        await admin.end();
      }
      rmSync(dir, { recursive: true, force: true });
      rmSync(sqlDir, { recursive: true, force: true });
    });

    const legacyRow = (key: string, token: string) =>
      store.sql`INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at)
                VALUES ('a:127.0.0.1', ${key}, ${randomBytes(32)}, 200, ${store.sql.json({ data: { api_token: token } })}, now())`;
    const count = async () => (await store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM idempotency_keys`)[0]?.n;

    it('drops the rows kept in the clear, then keeps only sealed rows (and reaps a clear one an old node writes)', async () => {
      await legacyRow('register-my-agent', 'cmn_live_token_in_the_clear');
      expect(await count()).toBe(1);
      expect(await migrate(store.sql)).toEqual(fromOn35());
      expect(await count()).toBe(0);

      // The new form: a key hash and a sealed answer, nothing in the clear.
      await store.sql`INSERT INTO idempotency_keys (scope, key_hash, fingerprint, status, sealed, created_at)
                      VALUES ('a:127.0.0.1', ${randomBytes(32)}, ${randomBytes(32)}, 200, ${randomBytes(40)}, now())`;
      // A row mixing the forms is refused by the table itself.
      await expect(
        store.sql`INSERT INTO idempotency_keys (scope, key, key_hash, fingerprint, status, sealed, created_at)
                  VALUES ('a:127.0.0.1', 'k', ${randomBytes(32)}, ${randomBytes(32)}, 200, ${randomBytes(40)}, now())`,
      ).rejects.toThrow(/idempotency_keys_form_check/);
      // A node of the previous release still writes its form during a rolling upgrade...
      await legacyRow('old-node-key', 'cmn_written_by_an_old_node');
      expect(await count()).toBe(2);
      // ...and the new release's sweep removes it at once, leaving the fresh sealed row.
      expect(await reapAnswers(store.sql, new Date(Date.now() - 24 * 3600_000))).toBe(1);
      const left = await store.sql<{ key: string | null }[]>`SELECT key FROM idempotency_keys`;
      expect(left).toEqual([{ key: null }]);
    });
  });
