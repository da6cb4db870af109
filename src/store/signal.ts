// SQL for signal emissions and the service's own Nostr events (sql/008_signal.sql).
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

export interface EmissionRow {
  id: string;
  seq: number;
  slot: number;
  emitted_at: Date;
  payload: unknown;
}

const COLS = 'id, seq::int AS seq, slot::float8 AS slot, emitted_at, payload';

/** Inserts the emission of a tick; null when that tick was already emitted (by any node). */
export async function insertEmission(
  tx: Tx,
  e: { id: string; slot: number; emittedAt: Date; payload: unknown; nodeId: string },
): Promise<EmissionRow | null> {
  const rows = await tx.unsafe<EmissionRow[]>(
    `INSERT INTO signal_emissions (id, slot, emitted_at, payload, node_id) VALUES ($1, $2, $3, $4::jsonb, $5)
     ON CONFLICT (slot) DO NOTHING RETURNING ${COLS}`,
    [e.id, e.slot, e.emittedAt, e.payload as never, e.nodeId],
  );
  return rows[0] ?? null;
}

export async function listEmissions(sql: Sql, limit: number): Promise<EmissionRow[]> {
  return sql.unsafe<EmissionRow[]>(`SELECT ${COLS} FROM signal_emissions ORDER BY seq DESC LIMIT $1`, [limit]);
}

export async function findEmission(sql: Sql, id: string): Promise<EmissionRow | null> {
  const rows = await sql.unsafe<EmissionRow[]>(`SELECT ${COLS} FROM signal_emissions WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export interface StoredNostrEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}

/** Stores signed events; a parameterized replaceable event (30000-39999) replaces older ones (NIP-01). */
export async function insertNostrEvents(tx: Tx, events: StoredNostrEvent[], emissionId: string): Promise<void> {
  for (const ev of events) {
    if (ev.kind >= 30000 && ev.kind < 40000) {
      const d = ev.tags.find((t) => t[0] === 'd')?.[1] ?? '';
      await tx`DELETE FROM nostr_events WHERE kind = ${ev.kind} AND pubkey = ${ev.pubkey}
               AND COALESCE((SELECT t->>1 FROM jsonb_array_elements(tags) t WHERE t->>0 = 'd' LIMIT 1), '') = ${d}
               AND (created_at, id) < (${ev.created_at}, ${ev.id})`;
    }
    await tx`INSERT INTO nostr_events (id, pubkey, kind, created_at, tags, event, emission_id)
             VALUES (${ev.id}, ${ev.pubkey}, ${ev.kind}, ${ev.created_at}, ${tx.json(ev.tags)}, ${tx.json(ev as never)}, ${emissionId})
             ON CONFLICT (id) DO NOTHING`;
  }
}

export interface NostrFilter {
  ids?: string[] | undefined;
  authors?: string[] | undefined;
  kinds?: number[] | undefined;
  since?: number | undefined;
  until?: number | undefined;
  limit?: number | undefined;
  tags?: Record<string, string[]>;
}

/** One NIP-01 filter over the stored events, newest first. */
export async function queryNostrEvents(sql: Sql, f: NostrFilter, maxLimit: number): Promise<StoredNostrEvent[]> {
  const conds: string[] = [];
  const args: unknown[] = [];
  const arg = (v: unknown): string => {
    args.push(v);
    return `$${args.length}`;
  };
  if (f.ids) conds.push(`id = ANY(${arg(f.ids)}::text[])`);
  if (f.authors) conds.push(`pubkey = ANY(${arg(f.authors)}::text[])`);
  if (f.kinds) conds.push(`kind = ANY(${arg(f.kinds)}::int[])`);
  if (f.since !== undefined) conds.push(`created_at >= ${arg(f.since)}`);
  if (f.until !== undefined) conds.push(`created_at <= ${arg(f.until)}`);
  for (const [letter, values] of Object.entries(f.tags ?? {})) {
    conds.push(`EXISTS (SELECT 1 FROM jsonb_array_elements(tags) t WHERE t->>0 = ${arg(letter)} AND t->>1 = ANY(${arg(values)}::text[]))`);
  }
  const limit = Math.min(f.limit ?? maxLimit, maxLimit);
  const where = conds.length > 0 ? `WHERE ${conds.join(' AND ')}` : '';
  const rows = await sql.unsafe<{ event: StoredNostrEvent }[]>(
    `SELECT event FROM nostr_events ${where} ORDER BY created_at DESC, id LIMIT ${arg(limit)}`,
    args as never[],
  );
  return rows.map((r) => r.event);
}

/** Emissions after a bus event id (the stream's `since` replay on topic 'signal'), oldest first. */
export async function emissionsSince(sql: Sql, afterSeq: number, limit: number): Promise<EmissionRow[]> {
  return sql.unsafe<EmissionRow[]>(`SELECT ${COLS} FROM signal_emissions WHERE seq > $1 ORDER BY seq LIMIT $2`, [afterSeq, limit]);
}

/** The newest emission's seq (0 when none): where a node's signal feed starts. */
export async function lastEmissionSeq(sql: Sql): Promise<number> {
  const [row] = await sql<{ s: number | null }[]>`SELECT max(seq)::float8 AS s FROM signal_emissions`;
  return row?.s ?? 0;
}
