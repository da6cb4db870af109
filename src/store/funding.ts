// SQL for funding goals and campaigns (sql/007_treasury.sql).
import type { Sql } from 'postgres';
import type { Asset } from './assets.js';
import type { Tx } from './ledger.js';

export interface GoalRow {
  id: string;
  purpose: string;
  asset: Asset;
  target_base: string;
  priority: number;
  status: 'open' | 'funded' | 'closed';
}

export async function listGoals(sql: Sql): Promise<GoalRow[]> {
  return sql<GoalRow[]>`SELECT id, purpose, asset, target_base::text AS target_base, priority, status
                        FROM funding_goals ORDER BY priority`;
}

export type CampaignState = 'open' | 'funded' | 'ended' | 'closed';

export interface CampaignRow {
  id: string;
  seq: string;
  title: string;
  purpose: string;
  asset: Asset;
  target_base: string;
  raised_base: string;
  contributions: number;
  /** Deposits naming it that are not verified or rejected yet (their amounts are unknown). */
  pending: number;
  opened_by: number;
  opened_by_name: string;
  state: CampaignState;
  created_at: Date;
  ends_at: Date | null;
  finished_at: Date | null;
  closed_by: string | null;
  hidden: boolean;
}

const CAMPAIGN = `c.id::text AS id, c.seq::text AS seq, c.title, c.purpose, c.asset, c.target_base::text AS target_base,
  c.raised_base::text AS raised_base, c.contributions, c.opened_by::int AS opened_by, i.name AS opened_by_name, c.state,
  c.created_at, c.ends_at, c.finished_at, c.closed_by, c.hidden_at IS NOT NULL AS hidden,
  (SELECT count(*)::int FROM deposits d WHERE d.campaign_id = c.id AND d.state IN ('submitted', 'verifying')) AS pending`;

export interface NewCampaign {
  title: string;
  purpose: string;
  asset: Asset;
  targetBase: bigint;
  openedBy: number;
  at: Date;
  endsAt: Date | null;
}

export async function insertCampaign(tx: Tx, c: NewCampaign): Promise<CampaignRow> {
  const [row] = await tx.unsafe<CampaignRow[]>(
    `WITH c AS (INSERT INTO funding_campaigns (title, purpose, asset, target_base, opened_by, created_at, ends_at)
                VALUES ($1, $2, $3, $4::numeric, $5, $6, $7) RETURNING *)
     SELECT ${CAMPAIGN} FROM c JOIN identities i ON i.id = c.opened_by`,
    [c.title, c.purpose, c.asset, c.targetBase.toString(), c.openedBy, c.at, c.endsAt],
  );
  if (!row) throw new Error('insert funding_campaigns returned nothing');
  return row;
}

/** How many open campaigns a member has (call with its identity row locked). */
export async function countOpenBy(tx: Tx, openedBy: number): Promise<number> {
  const [row] = await tx<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM funding_campaigns WHERE opened_by = ${openedBy} AND state = 'open'`;
  return row?.n ?? 0;
}

/** Campaigns not hidden, newest first, of one state or all; `beforeSeq` is the keyset cursor. */
export async function listCampaigns(
  sql: Sql,
  state: CampaignState | null,
  limit: number,
  beforeSeq: bigint | null,
): Promise<CampaignRow[]> {
  return sql.unsafe<CampaignRow[]>(
    `SELECT ${CAMPAIGN} FROM funding_campaigns c JOIN identities i ON i.id = c.opened_by
     WHERE c.hidden_at IS NULL AND ($1::text IS NULL OR c.state = $1) AND ($2::bigint IS NULL OR c.seq < $2)
     ORDER BY c.seq DESC LIMIT $3`,
    [state, beforeSeq === null ? null : beforeSeq.toString(), limit],
  );
}

export async function findCampaign(sql: Tx, id: string): Promise<CampaignRow | null> {
  const rows = await sql.unsafe<CampaignRow[]>(
    `SELECT ${CAMPAIGN} FROM funding_campaigns c JOIN identities i ON i.id = c.opened_by WHERE c.id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** Locks a campaign row and reads it: `update` for a move (state, amounts), `share` for a deposit
 * report naming it (a concurrent move waits for the report, or the report for the move). */
export async function lockCampaign(tx: Tx, id: string, mode: 'update' | 'share'): Promise<CampaignRow | null> {
  await tx.unsafe(`SELECT 1 FROM funding_campaigns WHERE id = $1 FOR ${mode === 'update' ? 'UPDATE' : 'SHARE'}`, [id]);
  return findCampaign(tx, id);
}

/** Locks an open campaign whose ends_at has passed; another node's pass skips it. */
export async function lockNextDue(tx: Tx, now: Date): Promise<CampaignRow | null> {
  const [due] = await tx<{ id: string }[]>`
    SELECT id::text AS id FROM funding_campaigns WHERE state = 'open' AND ends_at IS NOT NULL AND ends_at <= ${now}
    ORDER BY ends_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
  return due ? findCampaign(tx, due.id) : null;
}

export interface CampaignPatch {
  state: CampaignState;
  addBase: bigint;
  addContributions: number;
  finishedAt: Date | null;
  closedBy: string | null;
}

/** Applies a move to a locked campaign; `finishedAt` and `closedBy` are set only once. */
export async function updateCampaign(tx: Tx, id: string, p: CampaignPatch): Promise<CampaignRow> {
  await tx.unsafe(
    `UPDATE funding_campaigns SET state = $2, raised_base = raised_base + $3::numeric, contributions = contributions + $4,
       finished_at = COALESCE(finished_at, $5), closed_by = COALESCE(closed_by, $6) WHERE id = $1`,
    [id, p.state, p.addBase.toString(), p.addContributions, p.finishedAt, p.closedBy],
  );
  const row = await findCampaign(tx, id);
  if (!row) throw new Error(`campaign ${id} vanished while locked`);
  return row;
}

/** Open campaigns not hidden, newest first (the page for people). */
export async function openCampaigns(sql: Sql, limit: number): Promise<CampaignRow[]> {
  return listCampaigns(sql, 'open', limit, null);
}
