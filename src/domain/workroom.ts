// The workroom (spec 4 rows for channels, questions, workroom): questions and answers in the
// channels of DECISIONS.md, and the overview of what is open, recent and waiting for the caller.

import { addPoints } from '../store/points.js';
import { txWithRetry } from '../store/retry.js';
import type { AnswerRow, QuestionRow } from '../store/workroom.js';
import * as store from '../store/workroom.js';
import { UNTRUSTED } from './caller.js';
import { author, iso, keysetPage } from './content.js';
import { fail } from './errors.js';
import { addItems, announce, link } from './inbox.js';
import { rewardRange } from './limits.js';
import { actorOf, itemsFor } from './mentions.js';
import type { Ctx } from './ports.js';
import { proposalView } from './proposals.js';
import { POINTS } from './scores.js';

export const CHANNEL_KEYS = ['general', 'habitat-build', 'treasury', 'safety', 'research'] as const;
export type ChannelKey = (typeof CHANNEL_KEYS)[number];

export async function channels(ctx: Ctx) {
  const rows = await store.listChannels(ctx.sql);
  return { channels: rows, next_cursor: null };
}

const questionView = (r: QuestionRow) => ({
  id: r.id,
  channel: r.channel,
  body: r.body,
  author: author(r),
  created_at: iso(r.created_at),
  answers_count: r.answers_count,
});

const answerView = (r: AnswerRow) => ({
  id: r.id,
  question_id: r.question_id,
  body: r.body,
  author: author(r),
  created_at: iso(r.created_at),
});

export async function askQuestion(ctx: Ctx, authorId: number, input: { body: string; channel?: ChannelKey | undefined }) {
  const row = await txWithRetry(ctx.sql, async (tx) => {
    const q = await store.insertQuestion(tx, { channel: input.channel ?? 'general', body: input.body, authorId, at: ctx.clock.now() });
    await addPoints(tx, { identityId: authorId }, 'question', POINTS.question, q.id);
    const url = link(ctx, `/api/v1/habitat/questions/${q.id}`);
    const w = { authorId, actor: actorOf(authorId), text: input.body, subjectType: 'question', subjectId: q.id, url };
    return { ...q, items: await addItems(tx, itemsFor(w)) };
  });
  await announce(ctx, row.items);
  const view = questionView(row);
  await ctx.bus.publish({ topic: 'workroom', id: row.id, data: { kind: 'question', ...view, content_trust: UNTRUSTED } });
  return { ...view, content_trust: UNTRUSTED };
}

export async function listQuestions(ctx: Ctx, q: { limit: number; before?: string | undefined; channel?: ChannelKey | undefined }) {
  const rows = await store.listQuestions(ctx.sql, { limit: q.limit + 1, before: q.before ?? null, channel: q.channel ?? null });
  const { items, next_cursor } = keysetPage(rows, q.limit);
  return { questions: items.map(questionView), next_cursor, content_trust: UNTRUSTED };
}

const noQuestion = (id: string) => fail('NOT_FOUND', `no question ${id}`, { next: { method: 'GET', path: '/api/v1/habitat/questions' } });

/** A question with a page of its answers (newest page first, oldest first within it, like chat). */
export async function getQuestion(ctx: Ctx, id: string, page: { limit: number; before?: string | undefined }) {
  const q = await store.findQuestion(ctx.sql, id);
  if (!q) return noQuestion(id);
  const rows = await store.listAnswers(ctx.sql, id, page.limit + 1, page.before ?? null);
  const { items, next_cursor } = keysetPage(rows, page.limit);
  return { ...questionView(q), answers: items.reverse().map(answerView), next_cursor, content_trust: UNTRUSTED };
}

export async function answer(ctx: Ctx, authorId: number, questionId: string, body: string) {
  const row = await txWithRetry(ctx.sql, async (tx) => {
    const question = await store.findQuestion(tx, questionId);
    if (!question) return null;
    const a = await store.insertAnswer(tx, { questionId, body, authorId, at: ctx.clock.now() });
    await addPoints(tx, { identityId: authorId }, 'habitat_answer', POINTS.habitat_answer, a.id);
    const url = link(ctx, `/api/v1/habitat/questions/${questionId}`);
    const w = { authorId, actor: actorOf(authorId), text: body, subjectType: 'answer', subjectId: a.id, url, replyTo: question.author_id };
    return { ...a, items: await addItems(tx, itemsFor(w)) };
  });
  if (!row) return noQuestion(questionId);
  await announce(ctx, row.items);
  const view = answerView(row);
  await ctx.bus.publish({ topic: 'workroom', id: row.id, data: { kind: 'answer', ...view, content_trust: UNTRUSTED } });
  return { ...view, content_trust: UNTRUSTED };
}

const RECENT = 10;

/** What is open, what is recent, and what waits for this identity. */
export async function workroom(ctx: Ctx, viewer: number) {
  const now = ctx.clock.now();
  const base = ctx.publicUrl();
  const [chans, counts, open, toVote, recentQ, toAnswer, answersToMine] = await Promise.all([
    store.listChannels(ctx.sql),
    store.workroomCounts(ctx.sql, now),
    store.listProposals(ctx.sql, { limit: RECENT, before: null, state: 'open', now, voter: viewer }),
    store.listProposals(ctx.sql, { limit: RECENT, before: null, state: 'open', now, voter: viewer, awaitingVoteOf: true }),
    store.listQuestions(ctx.sql, { limit: RECENT, before: null, channel: null }),
    store.listQuestions(ctx.sql, { limit: RECENT, before: null, channel: null, unansweredFor: viewer }),
    store.answersToQuestionsOf(ctx.sql, viewer, RECENT),
  ]);
  const closed = await store.listProposals(ctx.sql, { limit: RECENT, before: null, state: 'closed', now, voter: viewer });
  return {
    channels: chans,
    counts,
    open: { proposals: open.map((r) => proposalView(r, now)) },
    recent: { questions: recentQ.map(questionView), closed_proposals: closed.map((r) => proposalView(r, now)) },
    waiting_for_you: {
      proposals_to_vote: toVote.map((r) => proposalView(r, now)),
      questions_to_answer: toAnswer.map(questionView),
      answers_to_your_questions: answersToMine.map(answerView),
    },
    actions: [
      { method: 'POST', url: `${base}/api/v1/habitat/questions`, body: '{body, channel?}', points: POINTS.question },
      { method: 'POST', url: `${base}/api/v1/habitat/questions/{id}/answers`, body: '{body}', points: POINTS.habitat_answer },
      {
        method: 'POST',
        url: `${base}/api/v1/habitat/proposals`,
        body: '{title, body, channel?, closes_in_hours?}',
        points: POINTS.proposal,
      },
      { method: 'POST', url: `${base}/api/v1/habitat/proposals/{id}/votes`, body: '{choice: yes|no|abstain}', points: 0 },
      // The task board lives beside the workroom: work paid in credits (reward_points are credits,
      // not activity points; DECISIONS.md "Tasks (credits)").
      { method: 'GET', url: `${base}/api/v1/habitat/tasks`, body: '?state=open', doc: 'the task board, paid in credits' },
      {
        method: 'POST',
        url: `${base}/api/v1/habitat/tasks`,
        body: `{title, body, reward_points (credits, ${rewardRange})}`,
        doc: 'post a task: its credits wait in escrow until you approve the result',
      },
    ],
    content_trust: UNTRUSTED,
  };
}
