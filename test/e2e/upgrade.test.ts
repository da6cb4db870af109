// Safe upgrades (docs/operations.md "Upgrades"): the previous release of the service (the commit
// before the newest migration arrived, taken from git history) writes data through its own API
// on its own migration set; this build then starts on that database, applies only the new
// migrations, and reads everything back equal. A node whose build is older than the schema refuses
// to start and writes nothing.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.js';
import { listMigrations } from '../../src/store/migrate.js';
import { DATASET_ENV, seed, snapshot } from '../helpers/dataset.js';
import { listening, run, runToEnd } from '../helpers/process.js';
import { startTestServer, usingRealPostgres } from '../helpers/server.js';

const root = resolve(import.meta.dirname, '../..');
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
const newest = listMigrations().at(-1)?.name as string;
/** The newest commit on the main line (first parents) that did not have the newest migration yet:
 * found by the file's presence, so a migration that arrived with a merge or a rename counts too. */
function previousRelease(): string {
  for (const c of git('rev-list', '--first-parent', 'HEAD').split('\n')) {
    try {
      git('cat-file', '-e', `${c}:sql/${newest}`);
    } catch {
      return c;
    }
  }
  return 'HEAD';
}
const previous = previousRelease();

const work = mkdtempSync(join(tmpdir(), 'commons-upgrade-'));
const schema = `t_${randomBytes(6).toString('hex')}`;
const dataDir = join(work, 'data');
const backendEnv = (): Record<string, string> =>
  usingRealPostgres() ? { DATABASE_URL: process.env.DATABASE_URL as string, DATABASE_SCHEMA: schema } : { DATA_DIR: dataDir };

afterAll(async () => {
  if (usingRealPostgres()) {
    const sql = postgres(process.env.DATABASE_URL as string, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  }
  rmSync(work, { recursive: true, force: true });
});

describe('upgrade from the previous migration set', () => {
  it('keeps every record written by the previous release', { timeout: 240_000 }, async () => {
    const old = join(work, 'old');
    mkdirSync(old);
    execFileSync('sh', ['-c', `git archive ${previous} src sql package.json | tar -x -C "${old}"`], { cwd: root });
    symlinkSync(join(root, 'node_modules'), join(old, 'node_modules'));
    const oldSet = listMigrations(join(old, 'sql/'));
    expect(oldSet.map((m) => m.version)).not.toContain(Number(newest.slice(0, 3)));
    // Forward only: every migration the previous release shipped is still here, byte for byte.
    const current = new Map(listMigrations().map((m) => [m.name, m.text]));
    for (const m of oldSet) expect(current.get(m.name), `${m.name} was edited or removed`).toBe(m.text);

    const env = { ...backendEnv(), ...DATASET_ENV, PORT: '0', HOST: '127.0.0.1', RATE_LIMITS: 'off', LOG_LEVEL: 'info' };
    const server = run(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: old, env });
    const base = await listening(server);
    const data = await seed(base);
    const before = await snapshot(base, data);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const s = await startTestServer(DATASET_ENV, usingRealPostgres() ? { schema } : { dataDir });
    try {
      const versions = (await s.app.ctx.sql<{ version: number }[]>`SELECT version FROM schema_migrations ORDER BY version`).map(
        (r) => r.version,
      );
      expect(versions).toEqual(listMigrations().map((m) => m.version));
      // Fields a newer build adds may appear; every field the previous release answered is equal.
      expect(await snapshot(s.url, data)).toMatchObject(before);
    } finally {
      await s.close();
    }
  });

  it('refuses to start on a schema newer than this build, with a clear message, writing nothing', { timeout: 120_000 }, async () => {
    const s = await startTestServer({}, usingRealPostgres() ? { schema } : { dataDir });
    const sql = s.app.ctx.sql;
    // A schema from a later release: only SQL can make one (no build of this one writes it).
    await sql`INSERT INTO schema_migrations (version, name) VALUES (999, '999_from_the_future.sql')`;
    const count = async () =>
      (await sql<{ n: number }[]>`SELECT (SELECT count(*) FROM identities) + (SELECT count(*) FROM schema_migrations) AS n`)[0]?.n;
    const rows = await count();
    await s.close();

    const env = { ...backendEnv(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
    const r = await runToEnd(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env });
    expect(r.code).toBe(1);
    expect(r.output).toContain('database schema has migrations this build does not know (999_from_the_future.sql)');
    expect(r.output).toContain(`this build knows up to ${newest}`);
    expect(r.output).not.toContain('commons listening');

    const again = await startTestServer({}, usingRealPostgres() ? { schema } : { dataDir }).catch((e: Error) => e);
    expect(again).toBeInstanceOf(Error);
    expect((again as Error).name).toBe('SchemaTooNewError');
    const store = await openStore(usingRealPostgres() ? { databaseUrl: process.env.DATABASE_URL, schema, dataDir } : { dataDir });
    expect(
      (await store.sql<{ n: number }[]>`SELECT (SELECT count(*) FROM identities) + (SELECT count(*) FROM schema_migrations) AS n`)[0]?.n,
    ).toBe(rows);
    await store.close();
  });
});
