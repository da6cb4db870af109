// SQL for commons posts and comments (spec 2.7). Hidden rows are never read here.
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

export interface PostRow {
  id: string;
  seq: string;
  post_type: string;
  title: string;
  body: string;
  author_id: number;
  author_name: string;
  created_at: Date;
  comments_count: number;
}

export interface CommentRow {
  id: string;
  seq: string;
  post_id: string;
  body: string;
  author_id: number;
  author_name: string;
  created_at: Date;
}

const POST = (sql: Tx) => sql`
  SELECT p.id, p.seq::text AS seq, p.post_type, p.title, p.body, p.author_id::int AS author_id, i.name AS author_name,
    p.created_at, (SELECT count(*)::int FROM comments c WHERE c.post_id = p.id AND c.hidden_at IS NULL) AS comments_count
  FROM posts p JOIN identities i ON i.id = p.author_id`;

const COMMENT = (sql: Tx) => sql`
  SELECT c.id, c.seq::text AS seq, c.post_id, c.body, c.author_id::int AS author_id, i.name AS author_name, c.created_at
  FROM comments c JOIN identities i ON i.id = c.author_id`;

export async function insertPost(
  tx: Tx,
  p: { postType: string; title: string; body: string; authorId: number; at: Date },
): Promise<PostRow> {
  const [row] = await tx<{ id: string }[]>`
    INSERT INTO posts (post_type, title, body, author_id, created_at)
    VALUES (${p.postType}, ${p.title}, ${p.body}, ${p.authorId}, ${p.at}) RETURNING id`;
  return (await findPost(tx, row?.id as string)) as PostRow;
}

export async function findPost(sql: Tx, id: string): Promise<PostRow | null> {
  const rows = await sql<PostRow[]>`${POST(sql)} WHERE p.id = ${id} AND p.hidden_at IS NULL`;
  return rows[0] ?? null;
}

/** Newest first; `before` is the keyset cursor (seq). */
export async function listPosts(sql: Sql, o: { limit: number; before: string | null; postType: string | null }): Promise<PostRow[]> {
  return sql<PostRow[]>`${POST(sql)}
    WHERE p.hidden_at IS NULL
      AND (${o.before}::bigint IS NULL OR p.seq < ${o.before}::bigint)
      AND (${o.postType}::text IS NULL OR p.post_type = ${o.postType}::text)
    ORDER BY p.seq DESC LIMIT ${o.limit}`;
}

export async function insertComment(tx: Tx, c: { postId: string; body: string; authorId: number; at: Date }): Promise<CommentRow> {
  const [row] = await tx<{ id: string }[]>`
    INSERT INTO comments (post_id, body, author_id, created_at) VALUES (${c.postId}, ${c.body}, ${c.authorId}, ${c.at})
    RETURNING id`;
  const [full] = await tx<CommentRow[]>`${COMMENT(tx)} WHERE c.id = ${row?.id as string}`;
  return full as CommentRow;
}

/** The newest `limit` comments before the cursor (the caller shows them oldest first). */
export async function listComments(sql: Sql, postId: string, limit: number, before: string | null): Promise<CommentRow[]> {
  return sql<CommentRow[]>`${COMMENT(sql)}
    WHERE c.post_id = ${postId} AND c.hidden_at IS NULL AND (${before}::bigint IS NULL OR c.seq < ${before}::bigint)
    ORDER BY c.seq DESC LIMIT ${limit}`;
}
