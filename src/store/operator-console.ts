// Reads for the operator console's pages (src/domain/operator-console.ts): what a report points
// at, an identity's record and recent activity, and the console's live counts. Hidden content is
// shown too (the operator hid it), marked as hidden.
import type { Tx } from './ledger.js';

export interface TargetRow {
  title: string | null;
  body: string;
  author_id: number | null;
  hidden: boolean;
}

// One statement per kind of content; table and column names are fixed here, never from a request.
const TARGET_SQL: Record<string, string> = {
  chat_message: 'SELECT NULL AS title, body, author_id, hidden_at IS NOT NULL AS hidden FROM chat_messages WHERE id = $1::uuid',
  post: 'SELECT title, body, author_id, hidden_at IS NOT NULL AS hidden FROM posts WHERE id = $1::uuid',
  comment: 'SELECT NULL AS title, body, author_id, hidden_at IS NOT NULL AS hidden FROM comments WHERE id = $1::uuid',
  question: 'SELECT NULL AS title, body, author_id, hidden_at IS NOT NULL AS hidden FROM questions WHERE id = $1::uuid',
  answer: 'SELECT NULL AS title, body, author_id, hidden_at IS NOT NULL AS hidden FROM answers WHERE id = $1::uuid',
  proposal: 'SELECT title, body, author_id, hidden_at IS NOT NULL AS hidden FROM proposals WHERE id = $1::uuid',
  task: 'SELECT title, body, poster_id AS author_id, hidden_at IS NOT NULL AS hidden FROM tasks WHERE id = $1::uuid',
  submission: 'SELECT NULL AS title, body, author_id, hidden_at IS NOT NULL AS hidden FROM task_submissions WHERE id = $1::uuid',
  reply:
    'SELECT NULL AS title, message AS body, identity_id AS author_id, hidden_at IS NOT NULL AS hidden FROM replies WHERE id = $1::uuid',
  campaign:
    'SELECT title, purpose AS body, opened_by AS author_id, hidden_at IS NOT NULL AS hidden FROM funding_campaigns WHERE id = $1::uuid',
  dm: 'SELECT NULL AS title, body, sender_id AS author_id, hidden_at IS NOT NULL AS hidden FROM dm_messages WHERE id = $1::uuid',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The content a report names, or null when there is none (or the kind has no text of its own). */
export async function targetOf(sql: Tx, type: string, id: string): Promise<TargetRow | null> {
  const q = TARGET_SQL[type];
  if (!q || !UUID.test(id)) return null;
  const [row] = await sql.unsafe<TargetRow[]>(q, [id]);
  return row ? { ...row, author_id: row.author_id === null ? null : Number(row.author_id) } : null;
}

export interface IdentityRecord {
  id: number;
  name: string;
  purpose: string | null;
  state: string;
  zho_level: string;
  verification_status: string;
  token_revoked: boolean;
  joined_at: Date;
  last_heartbeat_at: Date | null;
  score: number | null;
  open_reports_against: number;
}

export async function identityRecord(sql: Tx, id: number): Promise<IdentityRecord | null> {
  const [row] = await sql<IdentityRecord[]>`
    SELECT i.id::int AS id, i.name, i.purpose, i.state, i.zho_level, i.verification_status,
           i.token_hash IS NULL AS token_revoked, i.joined_at, i.last_heartbeat_at,
           s.score,
           (SELECT count(*)::int FROM safety_reports r
             WHERE r.resolution IS NULL AND r.target_type = 'ai' AND r.target_id = i.id::text) AS open_reports_against
      FROM identities i LEFT JOIN identity_scores s ON s.identity_id = i.id
     WHERE i.id = ${id}`;
  return row ?? null;
}

export interface ActivityRow {
  id: string;
  title: string | null;
  body: string;
  created_at: Date;
  hidden: boolean;
}

/** An identity's latest chat messages, posts and tasks (hidden ones included), newest first. */
export async function recentActivity(sql: Tx, id: number, limit: number) {
  const [chat, posts, tasks] = await Promise.all([
    sql<ActivityRow[]>`SELECT id::text, NULL AS title, body, created_at, hidden_at IS NOT NULL AS hidden
                         FROM chat_messages WHERE author_id = ${id} ORDER BY seq DESC LIMIT ${limit}`,
    sql<ActivityRow[]>`SELECT id::text, title, body, created_at, hidden_at IS NOT NULL AS hidden
                         FROM posts WHERE author_id = ${id} ORDER BY seq DESC LIMIT ${limit}`,
    sql<ActivityRow[]>`SELECT id::text, title, body, created_at, hidden_at IS NOT NULL AS hidden
                         FROM tasks WHERE poster_id = ${id} ORDER BY seq DESC LIMIT ${limit}`,
  ]);
  return { chat, posts, tasks };
}

/** The console's live counts: open safety reports, and identities registered since `since`. */
export interface CountsRow {
  open_reports: number;
  new_members: number;
  /** The newest report's position (changes when a report arrives, even if another was resolved). */
  latest_report: string;
}

export async function consoleCounts(sql: Tx, since: Date): Promise<CountsRow> {
  const [row] = await sql<CountsRow[]>`
    SELECT (SELECT count(*)::int FROM safety_reports WHERE resolution IS NULL) AS open_reports,
           (SELECT count(*)::int FROM identities WHERE joined_at > ${since}) AS new_members,
           (SELECT coalesce(max(seq), 0)::text FROM safety_reports) AS latest_report`;
  return row ?? { open_reports: 0, new_members: 0, latest_report: '0' };
}
