// Leader election for the scheduler (DESIGN.md: exactly one node runs the signal tick): a
// session-level PostgreSQL advisory lock held on a dedicated connection. When the holder dies,
// PostgreSQL ends its session and frees the lock; the next node to tick takes it over, so the
// takeover happens within one interval.
//
// Embedded PGlite serves a single node, so there is nothing to elect: `acquire` is always true.
import { createHash } from 'node:crypto';
import postgres from 'postgres';
import type { Config } from '../config.js';

export interface LeaderLock {
  /** True when this node holds (or has just taken) the lock. Cheap enough to call every tick. */
  acquire(): Promise<boolean>;
  /** The backend pid holding the lock for this node (tests use it to kill the holder). */
  pid(): Promise<number | null>;
  close(): Promise<void>;
}

/** A 31-bit key from the lock name and the schema, so isolated schemas never contend. */
export function lockKey(name: string, schema: string | undefined): number {
  return (
    createHash('sha256')
      .update(`${name}:${schema ?? ''}`)
      .digest()
      .readUInt32BE(0) & 0x7fffffff
  );
}

export function leaderLock(config: Config, name: string): LeaderLock {
  if (!config.databaseUrl) {
    return { acquire: async () => true, pid: async () => null, close: async () => {} };
  }
  const key = lockKey(name, config.databaseSchema);
  // max 1 and no lifetime: the lock lives exactly as long as this one session.
  const sql = postgres(config.databaseUrl, {
    max: 1,
    max_lifetime: null,
    idle_timeout: 0,
    connect_timeout: 5,
    onnotice: () => {},
    connection: { application_name: `commons-leader-${name}` },
  });
  return {
    async acquire() {
      try {
        // Already held by this session: keep it (pg_try_advisory_lock would stack a second hold).
        const [row] = await sql<{ leader: boolean }[]>`
          SELECT CASE WHEN EXISTS (
                   SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
                     AND classid = 0 AND objid = ${key} AND objsubid = 1 AND granted)
                 THEN true ELSE pg_try_advisory_lock(${key}::bigint) END AS leader`;
        return row?.leader === true;
      } catch {
        return false; // the database is unreachable: nobody can prove leadership, so do not emit.
      }
    },
    async pid() {
      const [row] = await sql<{ pid: number }[]>`
        SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = ${key} AND objsubid = 1 AND granted`;
      return row?.pid ?? null;
    },
    close: () => sql.end({ timeout: 2 }),
  };
}
