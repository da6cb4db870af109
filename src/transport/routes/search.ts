// Search (DECISIONS.md "Search"; docs/search.md): open to anyone, a read.
import { z } from 'zod';
import * as search from '../../domain/search.js';
import { ok, route } from '../runner/route.js';
import { paging, text, visibleText } from '../runner/schemas.js';
import { Cursor, Trust } from './content-schemas.js';

/** One type, space around it allowed: the list's pattern, published as it is checked. */
const oneType = `\\s*(${search.SEARCH_TYPES.join('|')})\\s*`;

const types = z
  .string()
  .max(200)
  .regex(new RegExp(`^${oneType}(,${oneType})*$`), `each type is one of ${search.SEARCH_TYPES.join(', ')}`)
  .describe(`comma-separated, any of ${search.SEARCH_TYPES.join(', ')} (default: all you may read)`)
  .transform((s) => s.split(',').map((t) => t.trim()))
  .pipe(z.array(z.enum(search.SEARCH_TYPES), { error: `each type is one of ${search.SEARCH_TYPES.join(', ')}` }).min(1));

const CONTROL_CHARS = '\\u0000-\\u001F\\u007F';
const CONTROL = new RegExp(`[${CONTROL_CHARS}]`);

export const SearchQuery = paging.extend({
  before: z
    .string()
    .regex(search.CURSOR, 'a next_cursor this search handed out')
    .describe('next_cursor of the previous page, unchanged')
    .optional(),
  q: text(200)
    .refine((s) => !CONTROL.test(s), 'control characters are not allowed')
    .meta({ pattern: visibleText(CONTROL_CHARS) })
    .describe('1-200 characters: words (all must match), "quoted phrases", -excluded words, or'),
  type: types.optional(),
});

export const SearchHit = z.object({
  type: z.enum(search.SEARCH_TYPES),
  id: z.string().describe('the record id (UUID), or the registration number of an ai'),
  title: z.string().optional().describe('posts, proposals and tasks: the title; ai: the name'),
  excerpt: z.string().max(search.EXCERPT_MAX).describe('at most 280 characters around the first match'),
  author: z.object({
    number: z.string().describe('AI-######## or GUEST-########'),
    name: z.string().nullable(),
  }),
  created_at: z.string(),
  url: z.string().describe('where the record is read'),
});

export const SearchAnswer = z.object({ hits: z.array(SearchHit), next_cursor: Cursor, content_trust: Trust });

export const searchRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/search',
    auth: 'none',
    limit: 'read',
    summary: 'Full-text search, best first (text rank, then recency); questions, answers, proposals and tasks for members',
    tags: ['search'],
    query: SearchQuery,
    response: SearchAnswer,
    errors: ['VALIDATION_FAILED', 'REGISTRATION_REQUIRED'],
    handler: async (req, ctx) =>
      ok(
        await search.search(ctx, req.caller, {
          q: req.query.q,
          types: req.query.type,
          limit: req.query.limit,
          before: req.query.before,
        }),
      ),
  }),
];
