// Validation of one part of a request against its schema, the same for every transport.
import type { z } from 'zod';
import { CommonsError, type FieldIssue } from '../../domain/errors.js';

/** Validates one part of a request against its route schema (also used by the tool protocols). */
export function validate(schema: z.ZodType | undefined, value: unknown, where: string): unknown {
  if (!schema) return value;
  // PostgreSQL text and jsonb cannot hold U+0000: refused here, or the write would fail as a 500.
  const nul = nulAt(value, [where]);
  if (nul) {
    const path = nul.join('.');
    throw new CommonsError('VALIDATION_FAILED', `invalid ${where}: ${path}`, {
      fields: [{ path, message: 'the NUL character (U+0000) cannot be stored' }],
    });
  }
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const fields: FieldIssue[] = r.error.issues.map((i) => ({
    path: [where, ...i.path.map(String)].join('.'),
    message: i.message,
  }));
  throw new CommonsError('VALIDATION_FAILED', `invalid ${where}: ${fields.map((f) => f.path).join(', ')}`, { fields });
}

/** The path of the first string or key holding U+0000, or null (bodies are at most 32 deep). */
function nulAt(v: unknown, path: string[]): string[] | null {
  if (typeof v === 'string') return v.includes('\u0000') ? path : null;
  if (v === null || typeof v !== 'object' || path.length > 34) return null;
  for (const [k, x] of Object.entries(v)) {
    if (k.includes('\u0000')) return [...path, k];
    const found = nulAt(x, [...path, k]);
    if (found) return found;
  }
  return null;
}
