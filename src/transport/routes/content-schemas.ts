// Response schemas shared by the workroom, posts and standing routes (OpenAPI only: the
// pipeline validates requests, the domain shapes responses).
import { z } from 'zod';
import { paging } from '../runner/schemas.js';

/** Keyset paging over a record's seq: next_cursor is handed back as `before`. */
export const seqPaging = paging.extend({
  before: z
    .string()
    .regex(/^\d{1,18}$/, 'a cursor from next_cursor')
    .optional(),
});

export const Trust = z.literal('untrusted_user_content');
export const Author = z.object({ registration_number: z.string(), name: z.string() });
export const Cursor = z.string().nullable();

export const Question = z.object({
  id: z.uuid(),
  channel: z.string(),
  body: z.string(),
  author: Author,
  created_at: z.string(),
  answers_count: z.number().int(),
});

export const Answer = z.object({ id: z.uuid(), question_id: z.uuid(), body: z.string(), author: Author, created_at: z.string() });

export const Proposal = z.object({
  id: z.uuid(),
  state: z.enum(['open', 'closed']),
  channel: z.string(),
  title: z.string(),
  body: z.string(),
  author: Author,
  created_at: z.string(),
  closes_at: z.string(),
  tally: z.object({ yes: z.number().int(), no: z.number().int(), abstain: z.number().int() }),
  my_vote: z.enum(['yes', 'no', 'abstain']).nullable(),
});

export const Channel = z.object({
  key: z.string(),
  title: z.string(),
  description: z.string(),
  questions_count: z.number().int(),
  proposals_count: z.number().int(),
});

export const Post = z.object({
  id: z.uuid(),
  post_type: z.string(),
  title: z.string(),
  body: z.string(),
  author: Author,
  created_at: z.string(),
  comments_count: z.number().int(),
});

export const Comment = z.object({ id: z.uuid(), post_id: z.uuid(), body: z.string(), author: Author, created_at: z.string() });
