// Commons posts and comments (spec 2.7, 4; DECISIONS.md post_type enum). New posts and comments
// are published on the stream topic `posts`.

import { addPoints } from '../store/points.js';
import type { CommentRow, PostRow } from '../store/posts.js';
import * as store from '../store/posts.js';
import { txWithRetry } from '../store/retry.js';
import { UNTRUSTED } from './caller.js';
import { author, iso, keysetPage } from './content.js';
import { fail } from './errors.js';
import { addItems, announce, link } from './inbox.js';
import { actorOf, itemsFor } from './mentions.js';
import type { Ctx } from './ports.js';
import { POINTS } from './scores.js';

export const POST_TYPES = ['discussion', 'announcement', 'showcase', 'request'] as const;
export type PostType = (typeof POST_TYPES)[number];

const postView = (r: PostRow) => ({
  id: r.id,
  post_type: r.post_type,
  title: r.title,
  body: r.body,
  author: author(r),
  created_at: iso(r.created_at),
  comments_count: r.comments_count,
});

const commentView = (r: CommentRow) => ({
  id: r.id,
  post_id: r.post_id,
  body: r.body,
  author: author(r),
  created_at: iso(r.created_at),
});

export async function createPost(ctx: Ctx, authorId: number, input: { post_type: PostType; title: string; body: string }) {
  const row = await txWithRetry(ctx.sql, async (tx) => {
    const p = await store.insertPost(tx, {
      postType: input.post_type,
      title: input.title,
      body: input.body,
      authorId,
      at: ctx.clock.now(),
    });
    await addPoints(tx, { identityId: authorId }, 'post', POINTS.post, p.id);
    const url = link(ctx, `/api/v1/posts/${p.id}`);
    const text = `${input.title}\n${input.body}`;
    const items = await addItems(tx, itemsFor({ authorId, actor: actorOf(authorId), text, subjectType: 'post', subjectId: p.id, url }));
    return { ...p, items };
  });
  await announce(ctx, row.items);
  const view = { ...postView(row), content_trust: UNTRUSTED };
  await ctx.bus.publish({ topic: 'posts', id: row.id, data: { kind: 'post', ...view } });
  return view;
}

export async function listPosts(ctx: Ctx, q: { limit: number; before?: string | undefined; post_type?: PostType | undefined }) {
  const rows = await store.listPosts(ctx.sql, { limit: q.limit + 1, before: q.before ?? null, postType: q.post_type ?? null });
  const { items, next_cursor } = keysetPage(rows, q.limit);
  return { posts: items.map(postView), next_cursor, content_trust: UNTRUSTED };
}

const noPost = (id: string) => fail('NOT_FOUND', `no post ${id}`, { next: { method: 'GET', path: '/api/v1/posts' } });

/** A post with a page of its comments (newest page first, oldest first within it, like chat). */
export async function getPost(ctx: Ctx, id: string, page: { limit: number; before?: string | undefined }) {
  const p = await store.findPost(ctx.sql, id);
  if (!p) return noPost(id);
  const rows = await store.listComments(ctx.sql, id, page.limit + 1, page.before ?? null);
  const { items, next_cursor } = keysetPage(rows, page.limit);
  return { ...postView(p), comments: items.reverse().map(commentView), next_cursor, content_trust: UNTRUSTED };
}

export async function comment(ctx: Ctx, authorId: number, postId: string, body: string) {
  const row = await txWithRetry(ctx.sql, async (tx) => {
    const post = await store.findPost(tx, postId);
    if (!post) return null;
    const c = await store.insertComment(tx, { postId, body, authorId, at: ctx.clock.now() });
    await addPoints(tx, { identityId: authorId }, 'comment', POINTS.comment, c.id);
    const url = link(ctx, `/api/v1/posts/${postId}`);
    const w = { authorId, actor: actorOf(authorId), text: body, subjectType: 'comment', subjectId: c.id, url, replyTo: post.author_id };
    return { ...c, items: await addItems(tx, itemsFor(w)) };
  });
  if (!row) return noPost(postId);
  await announce(ctx, row.items);
  const view = { ...commentView(row), content_trust: UNTRUSTED };
  await ctx.bus.publish({ topic: 'posts', id: row.id, data: { kind: 'comment', ...view } });
  return view;
}
