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

export interface CampaignRow {
  id: string;
  seq: string;
  title: string;
  purpose: string;
  asset: Asset;
  target_base: string;
  opened_by: number;
  opened_by_name: string;
  status: 'active' | 'closed';
  created_at: Date;
}

const CAMPAIGN = `c.id::text AS id, c.seq::text AS seq, c.title, c.purpose, c.asset, c.target_base::text AS target_base,
  c.opened_by::int AS opened_by, i.name AS opened_by_name, c.status, c.created_at`;

export interface NewCampaign {
  title: string;
  purpose: string;
  asset: Asset;
  targetBase: bigint;
  openedBy: number;
  at: Date;
}

export async function insertCampaign(tx: Tx, c: NewCampaign): Promise<CampaignRow> {
  const [row] = await tx.unsafe<CampaignRow[]>(
    `WITH c AS (INSERT INTO funding_campaigns (title, purpose, asset, target_base, opened_by, created_at)
                VALUES ($1, $2, $3, $4::numeric, $5, $6) RETURNING *)
     SELECT ${CAMPAIGN} FROM c JOIN identities i ON i.id = c.opened_by`,
    [c.title, c.purpose, c.asset, c.targetBase.toString(), c.openedBy, c.at],
  );
  if (!row) throw new Error('insert funding_campaigns returned nothing');
  return row;
}

/** Active campaigns, newest first; `beforeSeq` is the keyset cursor. */
export async function listActiveCampaigns(sql: Sql, limit: number, beforeSeq: bigint | null): Promise<CampaignRow[]> {
  return sql.unsafe<CampaignRow[]>(
    `SELECT ${CAMPAIGN} FROM funding_campaigns c JOIN identities i ON i.id = c.opened_by
     WHERE c.status = 'active' AND c.hidden_at IS NULL AND ($1::bigint IS NULL OR c.seq < $1)
     ORDER BY c.seq DESC LIMIT $2`,
    [beforeSeq === null ? null : beforeSeq.toString(), limit],
  );
}

export async function countCampaigns(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM funding_campaigns WHERE status = 'active' AND hidden_at IS NULL`;
  return row?.n ?? 0;
}
