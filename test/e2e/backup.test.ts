// Backup and restore round trip on the configured backend (docs/operations.md "Backup and
// restore"): data written through the API, a backup taken by the backup command while the server
// runs and takes more writes, a restore into an empty data directory or database, and every
// identity, memory, message, task, ledger entry and deposit read back equal, credits balanced.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import postgres, { type Sql } from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { DATASET_ENV, seed, snapshot } from '../helpers/dataset.js';
import { runToEnd } from '../helpers/process.js';
import { startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { conservation } from '../helpers/tasks.js';

const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'commons-backup-'));
const restoreDb = `restore_${randomBytes(6).toString('hex')}`;
const adminUrl = process.env.DATABASE_URL ?? '';
const restoreUrl = () => {
  const u = new URL(adminUrl);
  u.pathname = `/${restoreDb}`;
  return u.toString();
};

afterAll(async () => {
  if (usingRealPostgres()) {
    const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP DATABASE IF EXISTS "${restoreDb}" WITH (FORCE)`);
    await sql.end();
  }
  rmSync(work, { recursive: true, force: true });
});

/** The command line `npm run backup` / `npm run restore` runs, on this checkout's sources. */
const cli = (mode: 'backup' | 'restore', file: string, env: Record<string, string>) =>
  runToEnd(process.execPath, ['--import', 'tsx', 'src/backup.ts', mode, file], { cwd: root, env: { LOG_LEVEL: 'silent', ...env } });

const envOf = (s: TestServer): Record<string, string> =>
  s.config.databaseUrl
    ? { DATABASE_URL: s.config.databaseUrl, DATABASE_SCHEMA: s.config.databaseSchema as string }
    : { DATA_DIR: s.config.dataDir };

// Every row the dataset writes, in a fixed order; deposit verification bookkeeping moves on its own.
const TABLES: Record<string, string> = {
  identities: 'id',
  memory: 'identity_id, key',
  chat_messages: 'seq',
  posts: 'id',
  questions: 'id',
  answers: 'id',
  tasks: 'id',
  task_events: 'seq',
  task_submissions: 'id',
  ledger_accounts: 'id',
  ledger_transfers: 'id',
  point_events: 'id',
};
async function rows(sql: Sql): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [t, order] of Object.entries(TABLES)) out[t] = await sql.unsafe(`SELECT * FROM ${t} ORDER BY ${order}`);
  out.deposits = [...(await sql`SELECT id, asset, tx_hash, contributor_name, memo, on_behalf_of, submitted_at FROM deposits ORDER BY id`)];
  return out;
}

describe(`backup and restore (${usingRealPostgres() ? 'PostgreSQL' : 'embedded PGlite'})`, () => {
  it('restores every record equal into an empty store, taken while the server writes', { timeout: 240_000 }, async () => {
    const s = await startTestServer(DATASET_ENV);
    let restored: TestServer | undefined;
    try {
      const data = await seed(s.url);
      const before = await snapshot(s.url, data);
      const tables = await rows(s.app.ctx.sql);
      const file = join(work, 'commons.backup');
      // Guest writes one after another for as long as the backup runs: each is wholly in it or
      // wholly absent, so the restored ones are exactly the first k of them.
      let backingUp = true;
      const writer = (async () => {
        let n = 0;
        while (backingUp) {
          const r = await s.call('POST', '/api/v1/chat', { body: { body: `racing ${n}` } });
          expect(r.status).toBe(200);
          n++;
        }
        return n;
      })();
      const made = await cli('backup', file, envOf(s));
      backingUp = false;
      expect(made.code, made.output).toBe(0);
      const written = await writer;
      expect(written).toBeGreaterThan(0);

      let target: Record<string, string>;
      if (usingRealPostgres()) {
        const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
        await admin.unsafe(`CREATE DATABASE "${restoreDb}"`);
        await admin.end();
        target = { DATABASE_URL: restoreUrl(), DATABASE_SCHEMA: s.config.databaseSchema as string };
      } else {
        target = { DATA_DIR: join(work, 'restored') };
      }
      const back = await cli('restore', file, target);
      expect(back.code, back.output).toBe(0);

      restored = await startTestServer(
        { ...DATASET_ENV, ...target },
        usingRealPostgres() ? { schema: target.DATABASE_SCHEMA as string } : { dataDir: target.DATA_DIR as string },
      );
      const got = await snapshot(restored.url, data);
      got.chat = (got.chat as { body: string }[]).filter((m) => !m.body.startsWith('racing '));
      expect(got).toEqual(before);
      const after = await rows(restored.app.ctx.sql);
      const raced = (after.chat_messages as { body: string }[]).filter((m) => m.body.startsWith('racing ')).map((m) => m.body);
      const racedIn = raced.length;
      expect(raced).toEqual(Array.from({ length: racedIn }, (_, i) => `racing ${i}`));
      expect(racedIn).toBeLessThanOrEqual(written);
      expect(after.chat_messages?.slice(0, tables.chat_messages?.length)).toEqual(tables.chat_messages);
      expect(after.chat_messages).toHaveLength((tables.chat_messages?.length ?? 0) + racedIn);
      expect(after.point_events?.slice(0, tables.point_events?.length)).toEqual(tables.point_events);
      expect({ ...after, chat_messages: [], point_events: [] }).toEqual({ ...tables, chat_messages: [], point_events: [] });
      const c = await conservation(restored);
      expect(c.held).toBe(c.expected);
    } finally {
      await restored?.close();
      await s.close();
    }
  });

  it('backs up a stopped store too', { timeout: 120_000 }, async () => {
    const s = await startTestServer(DATASET_ENV);
    const target = usingRealPostgres() ? null : join(work, 'restored-stopped');
    let restored: TestServer | undefined;
    try {
      const data = await seed(s.url);
      const before = await snapshot(s.url, data);
      const env = envOf(s);
      const keep = { ...s.config };
      await s.app.close(); // the process stops; its store stays
      const file = join(work, 'stopped.backup');
      const made = await cli('backup', file, env);
      expect(made.code, made.output).toBe(0);
      if (target) expect((await cli('restore', file, { DATA_DIR: target })).code).toBe(0);
      restored = await startTestServer(
        DATASET_ENV,
        target ? { dataDir: target } : { schema: keep.databaseSchema as string, dataDir: keep.dataDir },
      );
      expect(await snapshot(restored.url, data)).toEqual(before);
    } finally {
      await restored?.close();
      await s.close();
    }
  });

  it('refuses to restore over existing data, changing nothing', { timeout: 120_000 }, async () => {
    const s = await startTestServer(DATASET_ENV);
    try {
      await seed(s.url);
      const file = join(work, 'other.backup');
      writeFileSync(file, 'not a backup');
      const count = async () => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM identities`)[0]?.n;
      const n = await count();
      const r = await cli('restore', file, envOf(s));
      expect(r.code).toBe(1);
      expect(r.output).toMatch(/restore failed: .*(not empty|already has a commons schema)/);
      expect(await count()).toBe(n);
    } finally {
      await s.close();
    }
  });
});
