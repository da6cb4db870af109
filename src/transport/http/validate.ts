// Validation of one part of a request against its schema, the same for every transport.
import type { z } from 'zod';
import { CommonsError, type FieldIssue } from '../../domain/errors.js';

/** Validates one part of a request against its route schema (also used by the tool protocols). */
export function validate(schema: z.ZodType | undefined, value: unknown, where: string): unknown {
  if (!schema) return value;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const fields: FieldIssue[] = r.error.issues.map((i) => ({
    path: [where, ...i.path.map(String)].join('.'),
    message: i.message,
  }));
  throw new CommonsError('VALIDATION_FAILED', `invalid ${where}: ${fields.map((f) => f.path).join(', ')}`, { fields });
}
