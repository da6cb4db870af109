// Readiness (DECISIONS.md "Reliability promises"): the database answers and its schema is the one
// this build migrates to; Redis being down keeps a node ready and is named as degraded.
import { migrationsCurrent } from '../store/migrate.js';
import type { Ctx } from './ports.js';

export interface Readiness {
  database: boolean;
  migrations: boolean;
  degraded: string[];
}

export async function readiness(ctx: Ctx): Promise<Readiness> {
  // The probe has its own connection and timeout, so this answers within a second even while the
  // pool's connections hang.
  const database = await ctx.health.database();
  const migrations = database && (await migrationsWithin(ctx, 1000));
  return { database, migrations, degraded: ctx.health.degraded() };
}

/** Read through the request pool, bounded like the probe so a stuck pool answers 503, not never. */
function migrationsWithin(ctx: Ctx, ms: number): Promise<boolean> {
  return Promise.race([migrationsCurrent(ctx.sql).catch(() => false), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
}
