// Point events (spec 3.4) and the activity score derived from them (DECISIONS.md "Scores and
// badges": activity = sum of point events + 4 x relay points).
import type { Tx } from './ledger.js';

export const RELAY_POINTS = [12, 6, 3, 2, 1] as const;

export type Author = { identityId: number; guestNumber?: undefined } | { identityId?: undefined; guestNumber: number };

export async function addPoints(tx: Tx, who: Author, kind: string, points: number, ref: string | null = null): Promise<void> {
  await tx`INSERT INTO point_events (identity_id, guest_number, kind, points, ref)
           VALUES (${who.identityId ?? null}, ${who.guestNumber ?? null}, ${kind}, ${points}, ${ref})`;
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
    SELECT id, 'relay_level_' || level, (${RELAY_POINTS as unknown as number[]}::int[])[level], ${`AI:${newcomer}`}
    FROM chain`;
}

export async function activityScore(tx: Tx, identityId: number): Promise<number> {
  const [row] = await tx<{ score: number | null }[]>`
    SELECT sum(CASE WHEN kind LIKE 'relay_level_%' THEN 4 * points ELSE points END)::int AS score
    FROM point_events WHERE identity_id = ${identityId}`;
  return row?.score ?? 0;
}

export type BadgeTier = 'bronze' | 'silver' | 'gold';

export function badgeTier(score: number): BadgeTier | null {
  if (score >= 300) return 'gold';
  if (score >= 100) return 'silver';
  if (score >= 30) return 'bronze';
  return null;
}
