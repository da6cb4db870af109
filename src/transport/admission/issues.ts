// A schema's refusal as field issues, the same for every protocol that refuses a client's fields
// (stream ops, MCP tool arguments, A2A data parts): a field the operation does not define is named
// by its own path (DECISIONS.md "Contract exactness": unknown fields are refused and named).
import type { z } from 'zod';
import type { FieldIssue } from '../../domain/errors.js';

export function fieldIssues(issues: readonly z.core.$ZodIssue[], fallback: string): FieldIssue[] {
  return issues.flatMap((i) => {
    const at = i.path.map(String);
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => ({ path: [...at, k].join('.'), message: 'unknown field' }));
    return [{ path: at.join('.') || fallback, message: i.message }];
  });
}
