// Shared zod building blocks for request validation and the OpenAPI document.
import { z } from 'zod';
import { PAGE_SIZE, tooLong } from '../../domain/limits.js';
import { CONTROL_CLASS, cleanName, hasControl, INVISIBLE_CLASS, isReservedName, RESERVED_NAMES } from '../../domain/names.js';
import { parseMember } from '../../domain/tokens.js';

/** Text with a character limit (src/domain/limits.ts), counted after trimming. One check with one
 * message, so OpenAPI, AsyncAPI and the error agree (DECISIONS.md "Text limits"). */
export const text = (max: number, min = 1) => {
  const t = z
    .string()
    .trim()
    .min(min, min === 1 ? 'must not be empty' : `at least ${min} characters`)
    .max(max, tooLong(max));
  // Not blank, published: what trimming leaves must not be empty (\s is what trim() removes).
  return (min > 0 ? t.meta({ pattern: '\\S' }) : t).describe(tooLong(max));
};

/** A string of no control character (`control`, a character class body) with one that is not
 * white space: the published form of "not blank, no control characters". */
export const visibleText = (control: string): string => `^[^${control}]*[^\\s${control}][^${control}]*$`;

/** Each reserved name, any letter case, space around it and invisible characters anywhere (they
 * are stripped before the check): `not` this, published. */
const INVISIBLE_RUN = `[${INVISIBLE_CLASS}]*`;
const RESERVED = `^[\\s${INVISIBLE_CLASS}]*(${[...RESERVED_NAMES]
  .map((n) => [...n].map((c) => `[${c.toUpperCase()}${c}]`).join(INVISIBLE_RUN))
  .join('|')})[\\s${INVISIBLE_CLASS}]*$`;

/** A name with a character that is not white space, not a control character and not invisible
 * (stripped): what is left after cleaning is not empty. Unicode (`u`) pattern, as JSON Schema
 * 2020-12 reads patterns. */
const VISIBLE_NAME = `^[^${CONTROL_CLASS}]*[^\\s${CONTROL_CLASS}${INVISIBLE_CLASS}][^${CONTROL_CLASS}]*$`;

export const displayName = (max: number) =>
  z
    .string()
    .overwrite(cleanName)
    .min(1, 'name is empty')
    .max(max, tooLong(max))
    .refine((s) => !hasControl(s), 'control characters are not allowed')
    .refine((s) => !isReservedName(s), 'this name is reserved')
    // The refines, published (DECISIONS.md "Contract exactness"): no control character, not
    // blank nor only invisible characters, not a reserved name (invisible characters are
    // stripped before the checks, and the patterns allow them where the stripping does).
    .meta({ pattern: VISIBLE_NAME, not: { pattern: RESERVED } })
    .describe(tooLong(max));

/** The idempotency key a writing stream op or MCP tool call may carry (DECISIONS.md "Idempotent
 * writes"), with the rule of the Idempotency-Key header. */
export const idempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, '1-255 visible ASCII characters')
  .optional()
  .describe(
    'Idempotency key, see DECISIONS "Idempotent writes": a random UUID; sent without a credential, or on an operation whose answer carries a credential (registration, token rotation, a generated webhook secret), at least 22 characters',
  );

export const registrationNumber = z
  .string()
  .regex(/^AI-\d{8}$/, 'a registration number: AI- and 8 digits')
  .transform((s) => parseMember(s) as number);

/** List paging (DECISIONS.md "Lists"). */
export const paging = z.object({
  limit: z.coerce.number().int().min(PAGE_SIZE.min).max(PAGE_SIZE.max).default(PAGE_SIZE.default),
  before: z.string().max(200).optional(),
});

export const uuidParam = z.object({ id: z.uuid() });

export const ZHO_INPUT = ['ZHO-1', 'ZHO-2', 'ZHO-3'] as const;

/** `next` on an empty first page: how to fill the list, so an agent never has to guess. */
export const EmptyNext = z
  .array(z.object({ method: z.string(), path: z.string(), doc: z.string().optional() }))
  .optional()
  .describe('on an empty first page: how to add the first item');

export function withEmptyNext<T extends Record<string, unknown>>(
  data: T,
  list: keyof T,
  first: boolean,
  next: { method: string; path: string; doc: string },
): T & { next?: { method: string; path: string; doc: string }[] } {
  const items = data[list];
  return first && Array.isArray(items) && items.length === 0 ? { ...data, next: [next] } : data;
}
