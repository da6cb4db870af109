// What an operation's body takes, in words, generated from the schema that validates it: the
// discovery document and llms.txt list it beside each operation and the OpenAPI description says
// it, so a newcomer reads `{body}` for chat instead of guessing `{message}`.
import { z } from 'zod';
import type { AnyRoute } from '../runner/route.js';

type Json = Record<string, unknown>;

export interface BodyFields {
  content_type: string;
  /** Field name -> its rule in words ("string, 1-2000 characters"). */
  required: Record<string, string>;
  optional: Record<string, string>;
}

const range = (min: unknown, max: unknown, unit: string): string | undefined => {
  if (typeof min === 'number' && typeof max === 'number') return min === max ? `${min} ${unit}` : `${min}-${max} ${unit}`;
  if (typeof max === 'number') return `at most ${max} ${unit}`;
  if (typeof min === 'number' && min > 0) return `at least ${min} ${unit}`;
  return undefined;
};

/** One field's rule in words, from its JSON Schema. */
export function ruleOf(s: Json): string {
  const alternatives = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (alternatives) return alternatives.map(ruleOf).join(' | ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return `one of ${s.enum.join(', ')}`;
  const type = typeof s.type === 'string' ? s.type : 'any JSON value';
  const parts = [typeof s.format === 'string' ? `${type} (${s.format})` : type];
  const length = range(s.minLength, s.maxLength, 'characters');
  if (length) parts.push(length);
  const size = range(s.minimum, s.maximum, 'inclusive');
  if (size) parts.push(size.replace(' inclusive', ''));
  // Text's "not blank" (src/transport/runner/schemas.ts) in words; other short patterns as they are.
  if (s.pattern === '\\S') parts.push('not blank');
  else if (typeof s.pattern === 'string' && s.format === undefined && s.pattern.length <= 80) parts.push(`matching ${s.pattern}`);
  if (type === 'array' && s.items) parts.push(`of ${ruleOf(s.items as Json)}`);
  return parts.join(', ');
}

/** The fields of an object schema and of each branch of its union (a disbursement per asset; a
 * name or its alias): required when the object or every branch requires it. */
function fieldsOf(s: Json): { props: Record<string, Json[]>; required: Set<string> } {
  const own = (s.properties ?? {}) as Record<string, Json>;
  const props: Record<string, Json[]> = Object.fromEntries(Object.entries(own).map(([k, v]) => [k, [v]]));
  let shared: Set<string> | undefined;
  for (const b of ((s.anyOf ?? s.oneOf) as Json[] | undefined) ?? []) {
    for (const [k, v] of Object.entries((b.properties ?? {}) as Record<string, Json>)) {
      if (!(k in own)) props[k] = [...(props[k] ?? []), v];
    }
    const mine = new Set((b.required ?? []) as string[]);
    shared = shared ? new Set([...shared].filter((k) => mine.has(k))) : mine;
  }
  return { props, required: new Set([...((s.required ?? []) as string[]), ...(shared ?? [])]) };
}

const memo = new WeakMap<AnyRoute, BodyFields | undefined>();

/** The body a route takes, or undefined when it takes none. */
export function bodyFields(r: AnyRoute): BodyFields | undefined {
  if (!r.body) return undefined;
  if (memo.has(r)) return memo.get(r);
  const schema = z.toJSONSchema(r.body as z.ZodType, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  const { props, required } = fieldsOf(schema);
  const out: BodyFields = { content_type: r.form ? 'application/x-www-form-urlencoded' : 'application/json', required: {}, optional: {} };
  for (const [name, variants] of Object.entries(props)) {
    const rule = [...new Set(variants.map(ruleOf))].join(' | ');
    (required.has(name) ? out.required : out.optional)[name] = rule;
  }
  memo.set(r, out);
  return out;
}
