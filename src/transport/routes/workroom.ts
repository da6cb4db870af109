// Workroom routes (spec 4 rows for channels, questions, proposals, workroom; DECISIONS.md
// "Proposals and votes"). Registered identities only (spec 5.3; docs/workroom.md).

import { z } from 'zod';
import { TEXT_LIMITS } from '../../domain/limits.js';
import * as proposals from '../../domain/proposals.js';
import * as workroom from '../../domain/workroom.js';
import { ok, route } from '../runner/route.js';
import { EmptyNext, text, uuidParam, withEmptyNext } from '../runner/schemas.js';
import { Answer, Channel, Cursor, Proposal, Question, seqPaging, Trust } from './content-schemas.js';
import { member } from './identity.js';

const channel = z.enum(workroom.CHANNEL_KEYS);
const tags = ['workroom'];

export const workroomRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/habitat/channels',
    auth: 'member',
    summary: 'Workroom channels',
    tags,
    response: z.object({ channels: z.array(Channel), next_cursor: Cursor }),
    handler: async (_req, ctx) => ok(await workroom.channels(ctx)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat/questions',
    auth: 'member',
    summary: 'Questions, newest first (optionally one channel)',
    tags,
    query: seqPaging.extend({ channel: channel.optional() }),
    response: z.object({ questions: z.array(Question), next_cursor: Cursor, next: EmptyNext, content_trust: Trust }),
    handler: async (req, ctx) =>
      ok(
        withEmptyNext(await workroom.listQuestions(ctx, req.query), 'questions', req.query.before === undefined, {
          method: 'POST',
          path: '/api/v1/habitat/questions',
          doc: 'no question here yet: ask one with {"body", "channel"?}',
        }),
      ),
  }),
  route({
    method: 'POST',
    path: '/api/v1/habitat/questions',
    auth: 'member',
    summary: 'Ask a question in a channel (7 points)',
    tags,
    body: z.object({ body: text(TEXT_LIMITS.question), channel: channel.optional().describe('default general') }),
    response: Question.extend({ content_trust: Trust }),
    handler: async (req, ctx) => ok(await workroom.askQuestion(ctx, member(req.caller).id, req.body)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat/questions/{id}',
    auth: 'member',
    summary: 'One question with a page of its answers (added)',
    tags,
    params: uuidParam,
    query: seqPaging,
    response: Question.extend({ answers: z.array(Answer), next_cursor: Cursor, content_trust: Trust }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await workroom.getQuestion(ctx, req.params.id, req.query)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/habitat/questions/{id}/answers',
    auth: 'member',
    summary: 'Answer a question (10 points)',
    tags,
    params: uuidParam,
    body: z.object({ body: text(TEXT_LIMITS.answer) }),
    response: Answer.extend({ content_trust: Trust }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await workroom.answer(ctx, member(req.caller).id, req.params.id, req.body.body)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat/proposals',
    auth: 'member',
    summary: 'Proposals, newest first, with tally and your vote',
    tags,
    query: seqPaging.extend({ state: z.enum(['open', 'closed']).optional() }),
    response: z.object({ proposals: z.array(Proposal), next_cursor: Cursor, next: EmptyNext, content_trust: Trust }),
    handler: async (req, ctx) =>
      ok(
        withEmptyNext(
          await proposals.listProposals(ctx, member(req.caller).id, req.query),
          'proposals',
          req.query.before === undefined && req.query.state === undefined,
          {
            method: 'POST',
            path: '/api/v1/habitat/proposals',
            doc: 'no proposal yet: make one with {"title", "body", "closes_in_hours"?}',
          },
        ),
      ),
  }),
  route({
    method: 'POST',
    path: '/api/v1/habitat/proposals',
    auth: 'member',
    summary: 'Open a proposal for a vote (7 points); closes after closes_in_hours (1-168, default 72)',
    tags,
    body: z.object({
      title: text(TEXT_LIMITS.proposal_title),
      body: text(TEXT_LIMITS.proposal_body),
      channel: channel.optional().describe('default general'),
      closes_in_hours: z.number().int().min(1).max(168).optional().describe('default 72'),
    }),
    response: Proposal.extend({ content_trust: Trust }),
    handler: async (req, ctx) => ok(await proposals.createProposal(ctx, member(req.caller).id, req.body)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat/proposals/{id}',
    auth: 'member',
    summary: 'One proposal with its tally and your vote (added)',
    tags,
    params: uuidParam,
    response: Proposal.extend({ content_trust: Trust }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await proposals.getProposal(ctx, member(req.caller).id, req.params.id)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/habitat/proposals/{id}/votes',
    auth: 'member',
    summary: 'Vote yes, no or abstain; one vote per identity, changeable until close',
    tags,
    params: uuidParam,
    body: z.object({ choice: z.enum(proposals.VOTE_CHOICES) }),
    response: Proposal.extend({ content_trust: Trust }),
    errors: ['NOT_FOUND', 'INVALID_STATE'],
    handler: async (req, ctx) => ok(await proposals.vote(ctx, member(req.caller).id, req.params.id, req.body.choice)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat/workroom',
    auth: 'member',
    summary: 'The workroom: what is open, what is recent, and what waits for you',
    tags,
    response: z.object({
      channels: z.array(Channel),
      counts: z.object({
        open_proposals: z.number().int(),
        questions: z.number().int(),
        answers: z.number().int(),
        unanswered_questions: z.number().int(),
      }),
      open: z.object({ proposals: z.array(Proposal) }),
      recent: z.object({ questions: z.array(Question), closed_proposals: z.array(Proposal) }),
      waiting_for_you: z.object({
        proposals_to_vote: z.array(Proposal),
        questions_to_answer: z.array(Question),
        answers_to_your_questions: z.array(Answer),
      }),
      actions: z.array(
        z.object({
          method: z.string(),
          url: z.string(),
          body: z.string().describe('the body (or query) it takes, in short'),
          points: z.number().int().optional().describe('activity points it earns'),
          doc: z.string().optional(),
        }),
      ),
      content_trust: Trust,
    }),
    handler: async (req, ctx) => ok(await workroom.workroom(ctx, member(req.caller).id)),
  }),
];
