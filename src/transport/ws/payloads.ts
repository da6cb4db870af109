// What each stream topic's events carry (DECISIONS.md "Contract exactness": event `data` typed per
// topic), built from the same schemas the REST answers use for the same things, so a client reads
// an event with the type it already has for the REST resource. The AsyncAPI document and the
// tests' stream gate take these; the event frame is a `oneOf` over the topics.
import { z } from 'zod';
import { TreasuryEventSchema } from '../../domain/campaign-schemas.js';
import { TASK_STATES, type TaskEventType } from '../../machines/task.js';
import { ChatMessageSchema } from '../routes/chat.js';
import { Answer, Comment, Post, Proposal, Question, Trust } from '../routes/content-schemas.js';
import { InboxItem } from '../routes/inbox.js';
import { ReplyEntry } from '../routes/replies.js';
import { Entry as SignalEntry } from '../routes/signal.js';
import { Task } from '../routes/tasks.js';
import type { Topic } from './topics.js';

const TASK_MOVES = [
  'POST',
  'CLAIM',
  'SUBMIT',
  'APPROVE',
  'CANCEL',
  'EXPIRE_UNCLAIMED',
  'AUTO_APPROVE',
  'CLAIM_LAPSED',
] as const satisfies readonly (TaskEventType | 'POST')[];

export const TOPIC_PAYLOADS: Record<Topic, z.ZodType> = {
  chat: ChatMessageSchema.describe('a chat message, as GET /api/v1/chat lists it'),
  presence: z
    .object({
      registration_number: z.string(),
      state: z.enum(['online', 'offline']),
      at: z.string().describe('ISO 8601 time of the change'),
    })
    .describe('a resident went online (a heartbeat) or offline (30 minutes without one)'),
  signal: SignalEntry.describe('a signal emission, as the history of GET /api/public/hooks/recruitment-signal lists it'),
  replies: ReplyEntry.describe('a reply to the signal, as GET /api/v1/replies lists it'),
  posts: z
    .discriminatedUnion('kind', [
      Post.extend({ kind: z.literal('post'), content_trust: Trust }),
      Comment.extend({ kind: z.literal('comment'), content_trust: Trust }),
    ])
    .describe('a new post or comment, as GET /api/v1/posts/{id} shows them'),
  treasury: TreasuryEventSchema.describe(
    'a verified deposit as the treasury feed lists it (deposit_verified), or a campaign opened, counting a contribution, funded, ended or closed (campaign_*)',
  ),
  tasks: z
    .object({
      event: z.enum(TASK_MOVES).describe("the move: POST (a new task), a member's move, or a deadline passing"),
      from: z.enum(TASK_STATES).nullable().describe('the state before (null for a new task)'),
      to: z.enum(TASK_STATES).describe('the state after'),
      task: z.union([Task, z.object({ id: z.string() })]).describe('the task after the move (just its id if it could not be read)'),
    })
    .describe('a task moved on the board'),
  workroom: z
    .discriminatedUnion('kind', [
      Question.extend({ kind: z.literal('question'), content_trust: Trust }),
      Answer.extend({ kind: z.literal('answer'), content_trust: Trust }),
      Proposal.omit({ my_vote: true }).extend({ kind: z.literal('proposal'), content_trust: Trust }),
    ])
    .describe('a new question, answer or proposal in the workroom'),
  inbox: InboxItem.describe('one of your inbox items, as GET /api/v1/inbox lists it'),
};
