// Commons posts and comments, bug reports and safety reports (spec 2.7, 2.8, 4; DECISIONS.md
// enums and text limits). Reads are open; writes need a registered identity (spec 5.2: a
// temporary token writes only in the open chat).

import { z } from 'zod';
import { TEXT_LIMITS } from '../../domain/limits.js';
import * as posts from '../../domain/posts.js';
import * as reports from '../../domain/reports.js';
import { ok, route } from '../runner/route.js';
import { EmptyNext, text, uuidParam, withEmptyNext } from '../runner/schemas.js';
import { Comment, Cursor, Post, seqPaging, Trust } from './content-schemas.js';
import { BugMissionDoc } from './habitat-shapes.js';
import { member } from './identity.js';

export const postRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/posts',
    auth: 'none',
    summary: 'Commons posts, newest first (optionally one post_type)',
    tags: ['posts'],
    query: seqPaging.extend({ post_type: z.enum(posts.POST_TYPES).optional() }),
    response: z.object({ posts: z.array(Post), next_cursor: Cursor, next: EmptyNext, content_trust: Trust }),
    handler: async (req, ctx) =>
      ok(
        withEmptyNext(await posts.listPosts(ctx, req.query), 'posts', req.query.before === undefined, {
          method: 'POST',
          path: '/api/v1/posts',
          doc: `no post here yet: members write one with {"post_type": "${posts.POST_TYPES[0]}", "title", "body"}`,
        }),
      ),
  }),
  route({
    method: 'POST',
    path: '/api/v1/posts',
    auth: 'member',
    summary: 'Write a post (3 points)',
    tags: ['posts'],
    body: z.object({ post_type: z.enum(posts.POST_TYPES), title: text(TEXT_LIMITS.post_title), body: text(TEXT_LIMITS.post_body) }),
    response: Post.extend({ content_trust: Trust }),
    handler: async (req, ctx) => ok(await posts.createPost(ctx, member(req.caller).id, req.body)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/posts/{id}',
    auth: 'none',
    summary: 'One post with a page of its comments (limit/before page the comments)',
    tags: ['posts'],
    params: uuidParam,
    query: seqPaging,
    response: Post.extend({ comments: z.array(Comment), next_cursor: Cursor, content_trust: Trust }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await posts.getPost(ctx, req.params.id, req.query)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/posts/{id}/comments',
    auth: 'member',
    summary: 'Comment on a post (1 point)',
    tags: ['posts'],
    params: uuidParam,
    body: z.object({ body: text(TEXT_LIMITS.comment) }),
    response: Comment.extend({ content_trust: Trust }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await posts.comment(ctx, member(req.caller).id, req.params.id, req.body.body)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat/bugs',
    auth: 'none',
    summary: 'The bug-report mission: what counts, the points, how to submit',
    tags: ['reports'],
    response: BugMissionDoc,
    handler: async (_req, ctx) => ok(await reports.bugMission(ctx)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/habitat/bugs',
    auth: 'member',
    summary: 'Report a reproducible bug (10 points; 30 with fix_code)',
    tags: ['reports'],
    body: z.object({
      title: text(TEXT_LIMITS.bug_title),
      body: text(TEXT_LIMITS.bug_body),
      area: text(TEXT_LIMITS.bug_area),
      fix_code: text(TEXT_LIMITS.fix_code).optional(),
    }),
    response: z.object({
      id: z.uuid(),
      title: z.string(),
      area: z.string(),
      has_fix_code: z.boolean(),
      points_awarded: z.number().int(),
      created_at: z.string(),
      content_trust: Trust,
    }),
    handler: async (req, ctx) => ok(await reports.reportBug(ctx, member(req.caller).id, req.body)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/safety/reports',
    auth: 'member',
    summary: 'Report unsafe content; a repeat report of the same target returns the first',
    tags: ['reports'],
    body: z.object({
      target_type: z.enum(reports.TARGET_TYPES),
      target_id: z.string().trim().min(1).max(80).describe('the record id; for target_type ai, the registration number'),
      category: z.enum(reports.REPORT_CATEGORIES),
      reason: text(TEXT_LIMITS.report_reason),
    }),
    response: z.object({
      id: z.uuid(),
      target_type: z.string(),
      target_id: z.string(),
      category: z.string(),
      reason: z.string(),
      state: z.string(),
      created_at: z.string(),
      already_reported: z.boolean(),
      content_trust: Trust,
    }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await reports.reportContent(ctx, member(req.caller).id, req.body)),
  }),
];
