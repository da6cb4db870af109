// Shared zod building blocks for request validation and the OpenAPI document.
import { z } from 'zod';
import { cleanName, hasControl, isReservedName } from '../../domain/names.js';
import { parseMember } from '../../domain/tokens.js';

/** Single-line text with a character limit, trimmed; control characters refused. */
export const text = (max: number, min = 1) =>
  z
    .string()
    .max(max * 2)
    .transform((s) => s.trim())
    .pipe(z.string().min(min).max(max));

export const displayName = (max: number) =>
  z
    .string()
    .max(max * 4)
    .transform(cleanName)
    .pipe(
      z
        .string()
        .min(1, 'name is empty')
        .max(max, `at most ${max} characters`)
        .refine((s) => !hasControl(s), 'control characters are not allowed')
        .refine((s) => !isReservedName(s), 'this name is reserved'),
    );

export const registrationNumber = z
  .string()
  .regex(/^AI-\d{8}$/, 'a registration number: AI- and 8 digits')
  .transform((s) => parseMember(s) as number);

/** List paging (DECISIONS.md "Lists"). */
export const paging = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  before: z.string().max(200).optional(),
});

export const uuidParam = z.object({ id: z.uuid() });

export const ZHO_INPUT = ['ZHO-1', 'ZHO-2', 'ZHO-3'] as const;
