// Once per run, before any test file: prepares a migrated PGlite template (a fresh PGlite
// directory takes seconds to initialise; copying a template takes milliseconds), builds the
// contract gate's documents and validators (gate-build.ts) for every file to load, and checks
// that the real servers named in DATABASE_URL / REDIS_URL answer: a configured real path is never
// skipped silently.

import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { openStore } from '../../src/store/db.js';
import { functionsChecksum, listFunctions, migrate, SQL_DIR } from '../../src/store/migrate.js';

export function templateDir(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(SQL_DIR).sort()) if (f.endsWith('.sql')) h.update(f).update(readFileSync(join(SQL_DIR, f)));
  h.update(functionsChecksum(listFunctions()));
  return join(tmpdir(), `commons-pglite-template-${h.digest('hex').slice(0, 16)}`);
}

export default async function setup(project: TestProject): Promise<void> {
  // Imported here, not at the top: files that import templateDir() need none of the gate's build.
  const { buildGate } = await import('./gate-build.js');
  project.provide('gateIndex', await buildGate());
  const dir = templateDir();
  if (!existsSync(join(dir, 'pg', 'PG_VERSION'))) {
    const work = `${dir}.${process.pid}`;
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    const store = await openStore({ dataDir: work });
    await migrate(store.sql);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    cpSync(work, dir, { recursive: true });
    rmSync(work, { recursive: true, force: true });
  }
  const url = process.env.DATABASE_URL;
  if (url) {
    const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
    await sql`SELECT 1`;
    await sql.end();
  }
  const redisUrl = process.env.REDIS_URL;
  if (redisUrl) {
    // Fails the run before any test when the configured Redis does not answer PONG.
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000, retryStrategy: () => null });
    try {
      await redis.connect();
      const pong = await redis.ping();
      if (pong !== 'PONG') throw new Error(`Redis at REDIS_URL answered ${pong} to PING`);
    } finally {
      redis.disconnect();
    }
  }
}
