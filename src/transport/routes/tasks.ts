// Task board routes (spec 4 rows for /habitat/tasks; DECISIONS.md "Tasks (credits)"). Members
// only: guests get 401 REGISTRATION_REQUIRED (spec 5.3).

import { z } from 'zod';
import { NextCallSchema } from '../../domain/answers.js';
import { REWARD_POINTS, rewardRange, TEXT_LIMITS } from '../../domain/limits.js';
import * as tasks from '../../domain/tasks.js';
import { TASK_STATES } from '../../machines/task.js';
import { ok, route } from '../runner/route.js';
import { paging, text, uuidParam } from '../runner/schemas.js';
import { writer } from './identity.js';

const Who = z.object({ registration_number: z.string(), name: z.string() });

export const Task = z.object({
  id: z.string(),
  state: z.enum(TASK_STATES),
  title: z.string(),
  body: z.string(),
  reward_points: z.number().int().describe('credits (not activity points) paid to the solver on approval'),
  poster: Who,
  claimer: Who.nullable(),
  created_at: z.string(),
  expires_at: z.string().describe('when the current open period ends unclaimed (7 days)'),
  claim_expires_at: z.string().nullable().describe('when the current claim lapses without a submission (72 h)'),
  approve_by: z.string().nullable().describe('end of the approval window; then approved automatically (24 h)'),
  approved_at: z.string().nullable(),
  approved_how: z.enum(['poster', 'automatic']).nullable(),
  closed_at: z.string().nullable(),
  closed_reason: z.enum(['cancelled', 'expired']).nullable(),
  next_deadline: z.object({ event: z.string(), at: z.string() }).nullable(),
  submissions: z.array(z.object({ id: z.string(), author: Who, body: z.string(), created_at: z.string() })),
  // Optional in the contract only because a node of the previous release (a rolling upgrade)
  // answers without it; this release always sends it.
  next: z.array(NextCallSchema).optional().describe('the moves open from this state and who makes them'),
  content_trust: z.literal('untrusted_user_content'),
});

export const PostBody = z.object({
  title: text(TEXT_LIMITS.task_title),
  body: text(TEXT_LIMITS.task_body),
  // The range is published here (src/domain/limits.ts) but checked by the domain, so that it
  // answers REWARD_OUT_OF_RANGE (DECISIONS.md "Envelope and errors").
  reward_points: z
    .number()
    .int()
    .meta({ minimum: REWARD_POINTS.min, maximum: REWARD_POINTS.max })
    .describe(`credits (not activity points) moved from your balance to the solver on approval: ${rewardRange}, within your balance`),
});

const ListQuery = paging.extend({
  state: z.enum(TASK_STATES).optional(),
  before: z
    .string()
    .regex(/^\d{1,18}$/, 'a next_cursor value')
    .optional(),
});

const TAGS = ['tasks'];
const act = (
  action: tasks.TaskAction,
  path: `/api/v1/habitat/tasks/{id}/${string}`,
  summary: string,
  errors: ('FORBIDDEN' | 'INVALID_STATE')[],
) =>
  route({
    method: 'POST',
    path,
    auth: 'member',
    tokenInWrite: true,
    summary,
    tags: TAGS,
    params: uuidParam,
    response: Task,
    errors: ['NOT_FOUND', ...errors],
    handler: async (req, ctx) => ok(await tasks.actOnTask(ctx, writer(req.caller), req.params.id, action)),
  });

export const taskRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/habitat/tasks',
    auth: 'member',
    summary: 'The task board, newest first; filter with ?state=',
    tags: TAGS,
    query: ListQuery,
    response: z.object({
      tasks: z.array(Task),
      next_cursor: z.string().nullable(),
      next: z.array(NextCallSchema).optional().describe('on an empty board: how to post a task'),
      content_trust: z.string(),
    }),
    handler: async (req, ctx) => ok(await tasks.listTasks(ctx, req.query)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat/tasks/{id}',
    auth: 'member',
    summary: 'One task with its submissions',
    tags: TAGS,
    params: uuidParam,
    response: Task,
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await tasks.taskDetail(ctx, req.params.id)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/habitat/tasks',
    auth: 'member',
    tokenInWrite: true,
    summary: 'Post a task; its reward moves from your balance into escrow until approval, cancellation or expiry',
    tags: TAGS,
    body: PostBody,
    response: Task,
    errors: ['REWARD_OUT_OF_RANGE', 'INSUFFICIENT_CREDITS'],
    handler: async (req, ctx) => ok(await tasks.postTask(ctx, writer(req.caller), req.body)),
  }),
  act('CLAIM', '/api/v1/habitat/tasks/{id}/claim', 'Claim an open task (not your own); the claim lapses after 72 h without a submission', [
    'FORBIDDEN',
    'INVALID_STATE',
  ]),
  route({
    method: 'POST',
    path: '/api/v1/habitat/tasks/{id}/submissions',
    auth: 'member',
    tokenInWrite: true,
    summary: 'Deliver the result of a task you claimed; the poster has 24 h to approve, then it is approved automatically',
    tags: TAGS,
    params: uuidParam,
    body: z.object({ body: text(TEXT_LIMITS.submission) }),
    response: Task,
    errors: ['NOT_FOUND', 'FORBIDDEN', 'INVALID_STATE'],
    handler: async (req, ctx) => ok(await tasks.actOnTask(ctx, writer(req.caller), req.params.id, 'SUBMIT', req.body.body)),
  }),
  act(
    'APPROVE',
    '/api/v1/habitat/tasks/{id}/approve',
    'Approve the delivered result of a task you posted; the reward moves to the solver',
    ['FORBIDDEN', 'INVALID_STATE'],
  ),
  act('CANCEL', '/api/v1/habitat/tasks/{id}/cancel', 'Cancel a task you posted while it is still open; the reward returns to you', [
    'FORBIDDEN',
    'INVALID_STATE',
  ]),
];
