// Proposals and votes (DECISIONS.md "Proposals and votes"). Open until closes_at, then closed
// with its tally; the proposal machine decides whether a vote is still allowed.

import { proposalNext, proposalStateAt } from '../machines/proposal.js';
import { addPoints } from '../store/points.js';
import { txWithRetry } from '../store/retry.js';
import type { ProposalRow } from '../store/workroom.js';
import * as store from '../store/workroom.js';
import { UNTRUSTED } from './caller.js';
import { author, iso, keysetPage } from './content.js';
import { fail } from './errors.js';
import { addItems, announce, excerpt, link } from './inbox.js';
import { actorOf, itemsFor } from './mentions.js';
import type { Ctx } from './ports.js';
import { POINTS } from './scores.js';

export const VOTE_CHOICES = ['yes', 'no', 'abstain'] as const;
export type VoteChoice = (typeof VOTE_CHOICES)[number];
export const DEFAULT_CLOSES_IN_HOURS = 72;

export function proposalView(r: ProposalRow, now: Date) {
  return {
    id: r.id,
    state: proposalStateAt(r.closes_at, now),
    channel: r.channel,
    title: r.title,
    body: r.body,
    author: author(r),
    created_at: iso(r.created_at),
    closes_at: iso(r.closes_at),
    tally: { yes: r.yes, no: r.no, abstain: r.abstain },
    my_vote: r.my_vote,
  };
}

const notFound = (id: string) => fail('NOT_FOUND', `no proposal ${id}`, { next: { method: 'GET', path: '/api/v1/habitat/proposals' } });

export interface NewProposalInput {
  title: string;
  body: string;
  channel?: string | undefined;
  closes_in_hours?: number | undefined;
}

export async function createProposal(ctx: Ctx, authorId: number, input: NewProposalInput) {
  const now = ctx.clock.now();
  const hours = input.closes_in_hours ?? DEFAULT_CLOSES_IN_HOURS;
  const row = await txWithRetry(ctx.sql, async (tx) => {
    const p = await store.insertProposal(tx, {
      channel: input.channel ?? 'general',
      title: input.title,
      body: input.body,
      authorId,
      at: now,
      closesAt: new Date(now.getTime() + hours * 3600_000),
    });
    await addPoints(tx, { identityId: authorId }, 'proposal', POINTS.proposal, p.id);
    const url = link(ctx, `/api/v1/habitat/proposals/${p.id}`);
    const text = `${input.title}\n${input.body}`;
    const w = { authorId, actor: actorOf(authorId), text, subjectType: 'proposal', subjectId: p.id, url };
    return { ...p, items: await addItems(tx, itemsFor(w)) };
  });
  await announce(ctx, row.items);
  const view = { ...proposalView(row, now), content_trust: UNTRUSTED };
  // my_vote is the reader's own: not in the event (left out, not undefined, which MessagePack keeps).
  const { my_vote: _, ...shared } = view;
  await ctx.bus.publish({ topic: 'workroom', id: row.id, data: { kind: 'proposal', ...shared } });
  return view;
}

export async function getProposal(ctx: Ctx, viewer: number, id: string) {
  const row = await store.findProposal(ctx.sql, id, viewer);
  if (!row) return notFound(id);
  return { ...proposalView(row, ctx.clock.now()), content_trust: UNTRUSTED };
}

export async function listProposals(
  ctx: Ctx,
  viewer: number,
  q: { limit: number; before?: string | undefined; state?: 'open' | 'closed' | undefined },
) {
  const now = ctx.clock.now();
  const rows = await store.listProposals(ctx.sql, {
    limit: q.limit + 1,
    before: q.before ?? null,
    state: q.state ?? null,
    now,
    voter: viewer,
  });
  const { items, next_cursor } = keysetPage(rows, q.limit);
  return { proposals: items.map((r) => proposalView(r, now)), next_cursor, content_trust: UNTRUSTED };
}

/** One vote per identity, changeable until close; after close 409 INVALID_STATE. */
export async function vote(ctx: Ctx, voterId: number, id: string, choice: VoteChoice) {
  const now = ctx.clock.now();
  const row = await store.findProposal(ctx.sql, id, voterId);
  if (!row) return notFound(id);
  const refuse = () =>
    fail('INVALID_STATE', `proposal ${id} closed at ${iso(row.closes_at)}; votes are final`, {
      next: { method: 'GET', path: `/api/v1/habitat/proposals/${id}`, doc: 'read the final tally' },
    });
  if (!proposalNext(proposalStateAt(row.closes_at, now), { type: 'VOTE' })) return refuse();
  // The store re-checks closes_at in the same statement, so a vote racing the close is refused.
  // The proposal row is locked first, so exactly one vote is the first (DECISIONS.md "Inbox":
  // the author hears of the first vote, in the vote's transaction).
  const out = await txWithRetry(ctx.sql, async (tx) => {
    const authorId = await store.lockProposalAuthor(tx, id);
    // The first vote by someone else: the author's own vote tells it nothing.
    const first = authorId !== null && (await store.voteCount(tx, id, authorId)) === 0;
    if (authorId === null || !(await store.castVote(tx, { proposalId: id, voterId, choice, now }))) return null;
    if (authorId === voterId || !first) return [];
    return addItems(tx, [
      {
        owner: authorId,
        kind: 'vote',
        actor: actorOf(voterId),
        subjectType: 'proposal',
        subjectId: id,
        url: link(ctx, `/api/v1/habitat/proposals/${id}`),
        excerpt: excerpt(`first vote: ${row.title}`),
      },
    ]);
  });
  if (!out) return refuse();
  await announce(ctx, out);
  return getProposal(ctx, voterId, id);
}
