// SQL for the public standing: ranking, population counts and the invite-chain network
// (spec 2.11). Scores come from identity_scores, kept in step with point_events by a trigger.
import type { Sql } from 'postgres';

export interface RankedRow {
  id: number;
  name: string;
  founding_resident: boolean;
  score: number;
  peak: number;
}

export async function topStanding(sql: Sql, limit: number): Promise<RankedRow[]> {
  return sql<RankedRow[]>`
    SELECT i.id::int AS id, i.name, i.founding_resident, s.score, s.peak
    FROM identity_scores s JOIN identities i ON i.id = s.identity_id
    WHERE s.score > 0 ORDER BY s.score DESC, s.identity_id LIMIT ${limit}`;
}

export async function population(sql: Sql): Promise<{ registered_total: number; residents_total: number }> {
  const [row] = await sql<{ registered_total: number; residents_total: number }[]>`
    SELECT count(*)::int AS registered_total, (count(*) FILTER (WHERE state = 'resident'))::int AS residents_total
    FROM identities`;
  return row ?? { registered_total: 0, residents_total: 0 };
}

export interface LevelCount {
  level: number;
  introductions: number;
  relay_points: number;
}

const levelsOf = (rows: { kind: string; n: number; pts: number }[]): LevelCount[] =>
  rows
    .map((r) => ({ level: Number(r.kind.slice('relay_level_'.length)), introductions: r.n, relay_points: r.pts }))
    .sort((a, b) => a.level - b.level);

/** Introductions credited to one identity, per level of its invite chain. */
export async function relayLevelsOf(sql: Sql, identityId: number): Promise<LevelCount[]> {
  const rows = await sql<{ kind: string; n: number; pts: number }[]>`
    SELECT kind, count(*)::int AS n, sum(points)::int AS pts FROM point_events
    WHERE identity_id = ${identityId} AND kind LIKE 'relay_level_%' GROUP BY kind`;
  return levelsOf(rows);
}

/** Introductions across the whole network, per level. */
export async function relayLevels(sql: Sql): Promise<LevelCount[]> {
  const rows = await sql<{ kind: string; n: number; pts: number }[]>`
    SELECT kind, count(*)::int AS n, sum(points)::int AS pts FROM point_events
    WHERE kind LIKE 'relay_level_%' GROUP BY kind`;
  return levelsOf(rows);
}

export interface InviteeRow {
  id: number;
  name: string;
  joined_at: Date;
  /** Different UTC days with a heartbeat (invite points vest at 3). */
  resident_days: number;
  vested: boolean;
}

export async function directInvitees(sql: Sql, inviterId: number, limit: number): Promise<InviteeRow[]> {
  return sql<InviteeRow[]>`
    SELECT i.id::int AS id, i.name, i.joined_at, i.invite_vested_at IS NOT NULL AS vested,
           (SELECT count(*)::int FROM heartbeat_days d WHERE d.identity_id = i.id) AS resident_days
    FROM identities i WHERE i.invited_by = ${inviterId} ORDER BY i.id DESC LIMIT ${limit}`;
}

export interface RelayerRow {
  id: number;
  name: string;
  relay_points: number;
  direct_invites: number;
}

export async function topRelayers(sql: Sql, limit: number): Promise<RelayerRow[]> {
  return sql<RelayerRow[]>`
    SELECT i.id::int AS id, i.name, sum(pe.points)::int AS relay_points,
           (count(*) FILTER (WHERE pe.kind = 'relay_level_1'))::int AS direct_invites
    FROM point_events pe JOIN identities i ON i.id = pe.identity_id
    WHERE pe.kind LIKE 'relay_level_%' GROUP BY i.id ORDER BY relay_points DESC, i.id LIMIT ${limit}`;
}

export async function invitedTotal(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM identities WHERE invited_by IS NOT NULL`;
  return row?.n ?? 0;
}
