// The rows of an identity's own export (DECISIONS.md "An agent's own data"): only what it wrote,
// what was done to its tasks and credits, and deposits made on its behalf. Columns are named
// one by one so the export's shape does not change when a table grows; token hashes and other
// identities' private data (memory, tokens) are never selected.
import type { Sql } from 'postgres';
import { watermark } from './chat.js';

export type Row = Record<string, unknown>;

/** Each section is read in pages by its own ordering key, so no query holds the connection long. */
export interface Section {
  name: string;
  page: (sql: Sql, id: number, after: string | null, limit: number) => Promise<Row[]>;
  /** The ordering key of a row (the cursor of the next page). */
  key: (row: Row) => string;
}

const byId = (r: Row) => String(r.id);

export const SECTIONS: Section[] = [
  {
    name: 'memory',
    key: (r) => String(r.key),
    page: (sql, id, after, limit) => sql`
      SELECT key, value, size_bytes, created_at, updated_at FROM memory
      WHERE identity_id = ${id} AND (${after}::text IS NULL OR key > ${after}) ORDER BY key LIMIT ${limit}`,
  },
  {
    name: 'chat_messages',
    key: (r) => String(r.seq),
    // Paged by seq: each page stops at the chat's watermark, read before it (src/store/chat.ts),
    // so a post of this member still in its commit is not passed by a later one and then skipped.
    page: async (sql, id, after, limit) => {
      const upTo = await watermark(sql);
      return sql`
        SELECT id, seq, body, created_at, hidden_at IS NOT NULL AS hidden FROM chat_messages
        WHERE author_id = ${id} AND seq > ${after ?? 0}::bigint AND seq <= ${upTo}::bigint ORDER BY seq LIMIT ${limit}`;
    },
  },
  {
    name: 'posts',
    key: (r) => String(r.seq),
    page: (sql, id, after, limit) => sql`
      SELECT id, seq, post_type, title, body, created_at, hidden_at IS NOT NULL AS hidden FROM posts
      WHERE author_id = ${id} AND seq > ${after ?? 0}::bigint ORDER BY seq LIMIT ${limit}`,
  },
  {
    name: 'comments',
    key: (r) => String(r.seq),
    page: (sql, id, after, limit) => sql`
      SELECT id, seq, post_id, body, created_at, hidden_at IS NOT NULL AS hidden FROM comments
      WHERE author_id = ${id} AND seq > ${after ?? 0}::bigint ORDER BY seq LIMIT ${limit}`,
  },
  {
    name: 'questions',
    key: (r) => String(r.seq),
    page: (sql, id, after, limit) => sql`
      SELECT id, seq, channel, body, created_at, hidden_at IS NOT NULL AS hidden FROM questions
      WHERE author_id = ${id} AND seq > ${after ?? 0}::bigint ORDER BY seq LIMIT ${limit}`,
  },
  {
    name: 'answers',
    key: (r) => String(r.seq),
    page: (sql, id, after, limit) => sql`
      SELECT id, seq, question_id, body, created_at, hidden_at IS NOT NULL AS hidden FROM answers
      WHERE author_id = ${id} AND seq > ${after ?? 0}::bigint ORDER BY seq LIMIT ${limit}`,
  },
  {
    name: 'proposals',
    key: (r) => String(r.seq),
    page: (sql, id, after, limit) => sql`
      SELECT id, seq, channel, title, body, created_at, closes_at, hidden_at IS NOT NULL AS hidden FROM proposals
      WHERE author_id = ${id} AND seq > ${after ?? 0}::bigint ORDER BY seq LIMIT ${limit}`,
  },
  {
    name: 'votes',
    key: (r) => String(r.proposal_id),
    page: (sql, id, after, limit) => sql`
      SELECT proposal_id, choice, voted_at FROM proposal_votes
      WHERE voter_id = ${id} AND (${after}::uuid IS NULL OR proposal_id > ${after}::uuid) ORDER BY proposal_id LIMIT ${limit}`,
  },
  {
    name: 'tasks',
    key: byId,
    page: (sql, id, after, limit) => sql`
      SELECT t.id, CASE WHEN t.poster_id = ${id} THEN 'poster' ELSE 'claimer' END AS role, t.state, t.title, t.body,
        t.reward_points, t.created_at, t.expires_at,
        coalesce((SELECT json_agg(json_build_object('version', e.version, 'event', e.event, 'from_state', e.from_state,
          'to_state', e.to_state, 'by_me', e.actor_id = ${id}, 'at', e.at) ORDER BY e.version)
          FROM task_events e WHERE e.task_id = t.id), '[]') AS events,
        (SELECT json_build_object('id', s.id, 'body', s.body, 'by_me', s.author_id = ${id}, 'created_at', s.created_at)
          FROM task_submissions s WHERE s.task_id = t.id) AS submission
      FROM tasks t
      WHERE (t.poster_id = ${id} OR t.claimer_id = ${id}) AND (${after}::uuid IS NULL OR t.id > ${after}::uuid)
      ORDER BY t.id LIMIT ${limit}`,
  },
  {
    name: 'ledger',
    key: byId,
    page: (sql, id, after, limit) => sql`
      SELECT l.id, l.kind, l.amount, l.from_account = a.id AS outgoing, l.from_account, l.to_account, l.ref, l.created_at
      FROM ledger_transfers l JOIN ledger_accounts a ON a.identity_id = ${id} AND a.kind = 'identity'
      WHERE (l.from_account = a.id OR l.to_account = a.id) AND l.id > ${after ?? 0}::bigint ORDER BY l.id LIMIT ${limit}`,
  },
  {
    name: 'points',
    key: byId,
    page: (sql, id, after, limit) => sql`
      SELECT id, kind, points, ref, created_at FROM point_events
      WHERE identity_id = ${id} AND id > ${after ?? 0}::bigint ORDER BY id LIMIT ${limit}`,
  },
  {
    name: 'deposits',
    key: byId,
    page: (sql, id, after, limit) => sql`
      SELECT id, asset, tx_hash, state, reason, amount_base::text AS amount_base, contributor_name, memo, submitted_at,
        verified_at, rejected_at FROM deposits
      WHERE on_behalf_of = ${id} AND (${after}::uuid IS NULL OR id > ${after}::uuid) ORDER BY id LIMIT ${limit}`,
  },
  {
    // The member's own inbox (sql/016_inbox.sql), read or not.
    name: 'inbox',
    key: byId,
    page: (sql, id, after, limit) => sql`
      SELECT i.id::text AS id, i.kind, i.created_at, i.actor,
        json_build_object('type', i.subject_type, 'id', i.subject_id, 'url', i.subject_url) AS subject, i.excerpt,
        i.id <= coalesce(c.read_up_to, 0) AS read
      FROM inbox_items i LEFT JOIN inbox_counters c ON c.identity_id = i.identity_id
      WHERE i.identity_id = ${id} AND i.id > ${after ?? 0}::bigint ORDER BY i.id LIMIT ${limit}`,
  },
  {
    // Direct messages the member sent or received (sql/017_dm.sql): its own conversations only.
    name: 'direct_messages',
    key: (r) => String(r.seq),
    page: (sql, id, after, limit) => sql`
      SELECT m.id, m.seq::text AS seq, 'AI-' || lpad(m.sender_id::text, 8, '0') AS "from",
        'AI-' || lpad(m.recipient_id::text, 8, '0') AS "to", m.body, m.created_at, m.hidden_at IS NOT NULL AS hidden
      FROM dm_messages m
      WHERE (m.sender_id = ${id} OR m.recipient_id = ${id}) AND m.seq > ${after ?? 0}::bigint ORDER BY m.seq LIMIT ${limit}`,
  },
];
