// Point events (spec 3.4) and the activity score derived from them (DECISIONS.md "Scores and
// badges": activity = sum of point events + 4 x relay points).
import type { Tx } from './ledger.js';

export const RELAY_POINTS = [12, 6, 3, 2, 1] as const;

export type Author = { identityId: number; guestNumber?: undefined } | { identityId?: undefined; guestNumber: number };

export async function addPoints(tx: Tx, who: Author, kind: string, points: number, ref: string | null = null): Promise<void> {
  await tx`INSERT INTO point_events (identity_id, guest_number, kind, points, ref)
           VALUES (${who.identityId ?? null}, ${who.guestNumber ?? null}, ${kind}, ${points}, ${ref})`;
}

/** Resident days an invitee needs before its introduction pays (DECISIONS.md "Scores and badges"). */
export const VESTING_DAYS = 3;

/**
 * Pays the invite chain of `newcomer` once it has been a resident on VESTING_DAYS different UTC
 * days (heartbeat_days); at most once ever (invite_vested_at is set in the same statement that
 * checks it). Returns whether this call paid it.
 */
export async function vestInvite(tx: Tx, newcomer: number, at: Date): Promise<boolean> {
  const [row] = await tx<{ invited_by: number }[]>`
    UPDATE identities SET invite_vested_at = ${at}
    WHERE id = ${newcomer} AND invited_by IS NOT NULL AND invite_vested_at IS NULL
      AND (SELECT count(*) FROM heartbeat_days WHERE identity_id = ${newcomer}) >= ${VESTING_DAYS}
    RETURNING invited_by::int`;
  if (!row) return false;
  await creditInviteChain(tx, newcomer, row.invited_by);
  return true;
}

/** Credits relay points to up to five inviters above `newcomer` (spec 2.11). */
export async function creditInviteChain(tx: Tx, newcomer: number, firstInviter: number): Promise<void> {
  await tx`
    WITH RECURSIVE chain(id, level) AS (
      SELECT ${firstInviter}::bigint, 1
      UNION ALL
      SELECT i.invited_by, c.level + 1 FROM chain c JOIN identities i ON i.id = c.id
      WHERE i.invited_by IS NOT NULL AND c.level < ${RELAY_POINTS.length}
    )
    INSERT INTO point_events (identity_id, kind, points, ref)
    SELECT id, 'relay_level_' || level, (${RELAY_POINTS as unknown as number[]}::int[])[level], ${`AI-${String(newcomer).padStart(8, '0')}`}
    FROM chain`;
}

export interface Standing {
  /** Current activity score: sum of point events + 4 x relay points. */
  score: number;
  /** The highest score ever reached: the badge tier held is derived from it (spec 2.11). */
  peak: number;
  awarded: { bronze: Date | null; silver: Date | null; gold: Date | null };
}

/** Read from identity_scores, which a trigger keeps in step with point_events (sql/005). */
export async function standingOf(tx: Tx, identityId: number): Promise<Standing> {
  const [row] = await tx<{ score: number; peak: number; bronze_at: Date | null; silver_at: Date | null; gold_at: Date | null }[]>`
    SELECT score, peak, bronze_at, silver_at, gold_at FROM identity_scores WHERE identity_id = ${identityId}`;
  if (!row) return { score: 0, peak: 0, awarded: { bronze: null, silver: null, gold: null } };
  return { score: row.score, peak: row.peak, awarded: { bronze: row.bronze_at, silver: row.silver_at, gold: row.gold_at } };
}

export async function activityScore(tx: Tx, identityId: number): Promise<number> {
  return (await standingOf(tx, identityId)).score;
}

export type BadgeTier = 'bronze' | 'silver' | 'gold';

export const BADGE_THRESHOLDS: Record<BadgeTier, number> = { bronze: 30, silver: 100, gold: 300 };

/** The tier for a score; pass the peak score to get the tier held (the highest reached). */
export function badgeTier(score: number): BadgeTier | null {
  if (score >= BADGE_THRESHOLDS.gold) return 'gold';
  if (score >= BADGE_THRESHOLDS.silver) return 'silver';
  if (score >= BADGE_THRESHOLDS.bronze) return 'bronze';
  return null;
}
