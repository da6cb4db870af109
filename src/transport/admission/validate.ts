// Validation of one part of a request against its schema, the same for every transport.
import { z } from 'zod';
import { CommonsError, type ErrorCode, type FieldIssue } from '../../domain/errors.js';

/** Validates one part of a request against its route schema (also used by the tool protocols). */
export function validate(schema: z.ZodType | undefined, value: unknown, where: string): unknown {
  if (!schema) return value;
  // PostgreSQL text and jsonb cannot hold U+0000: refused here, or the write would fail as a 500.
  // A lone surrogate (JSON "\ud800") is no Unicode text: refused, never stored as U+FFFD
  // (DECISIONS.md "Contract exactness").
  const bad = badTextAt(value, [where]);
  if (bad) {
    const path = bad.path.join('.');
    throw new CommonsError('VALIDATION_FAILED', `invalid ${where}: ${path}`, { fields: [{ path, message: bad.message }] });
  }
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw failure(r.error, where);
}

/** Refuses a body with a field its schema does not define, before a precheck reads the body (a
 * misspelt `acepted_principles` is a malformed request, never a decision). */
export function refuseUnknown(schema: z.ZodType | undefined, value: unknown, where: string): void {
  const r = schema?.safeParse(value);
  if (r && !r.success && r.error.issues.some((i) => i.code === 'unrecognized_keys')) throw failure(r.error, where);
}

/** Patterns whose failure answers a code of its own instead of VALIDATION_FAILED (a memory key:
 * INVALID_KEY, DECISIONS.md "Envelope and errors"), while the schema publishes the pattern. */
const CODED = new Map<string, ErrorCode>();
export function coded(pattern: RegExp, message: string, code: ErrorCode): z.ZodString {
  CODED.set(String(pattern), code);
  return z.string().regex(pattern, message);
}

/** The code a failed validation answers: a coded pattern's own, else VALIDATION_FAILED (the tool
 * protocols' own argument checks use it too, so every door answers the same code). */
export function codeOf(issues: z.core.$ZodIssue[]): ErrorCode {
  const codes = new Set(issues.map((i) => (i.code === 'invalid_format' && 'pattern' in i ? CODED.get(String(i.pattern)) : undefined)));
  const [only] = codes;
  return codes.size === 1 && only !== undefined ? only : 'VALIDATION_FAILED';
}

function failure(error: z.ZodError, where: string): CommonsError {
  // An unknown field is named by its own path (`body.bdy`), one entry per field.
  const fields: FieldIssue[] = error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({
          path: [where, ...i.path.map(String), k].join('.'),
          message: 'unknown field: this operation does not define it',
        }))
      : [{ path: [where, ...i.path.map(String)].join('.'), message: i.message }],
  );
  const code = codeOf(error.issues);
  const text = code === 'VALIDATION_FAILED' ? `invalid ${where}: ${fields.map((f) => f.path).join(', ')}` : (fields[0]?.message ?? code);
  return new CommonsError(code, text, { fields });
}

const NUL = 'the NUL character (U+0000) cannot be stored';
const SURROGATE = 'a lone UTF-16 surrogate is not Unicode text (send valid UTF-8)';

// With the u flag a string is read by code points: only a surrogate without its pair matches.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const textProblem = (s: string): string | null => (s.includes('\u0000') ? NUL : LONE_SURROGATE.test(s) ? SURROGATE : null);

/** The path of the first string or key holding U+0000 or a lone surrogate, or null (bodies are at
 * most 32 deep). `path` is the walk's own stack, copied only for a finding: every request's params,
 * query and body pass here, and a path array per key was most of what the check allocated. */
function badTextAt(v: unknown, path: string[]): { path: string[]; message: string } | null {
  if (typeof v === 'string') {
    const message = textProblem(v);
    return message ? { path: [...path], message } : null;
  }
  if (v === null || typeof v !== 'object' || path.length > 34) return null;
  for (const k of Object.keys(v)) {
    path.push(k);
    const message = textProblem(k);
    const found = message ? { path: [...path], message } : badTextAt((v as Record<string, unknown>)[k], path);
    path.pop();
    if (found) return found;
  }
  return null;
}
