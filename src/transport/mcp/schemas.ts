// The tools' JSON Schemas as MCP clients load them (DECISIONS.md "Contract exactness"): from the
// same zod schemas that validate the arguments (strict: an argument a tool does not define is
// refused), in no declared dialect (MCP's default, JSON Schema 2020-12, which draft-07 validators
// also read for these keywords), and in the portable spelling: one `type` per schema (nullable as
// an `anyOf` with a `null` branch) and no schema that constrains nothing.
import { z } from 'zod';

type Json = Record<string, unknown>;

/** What "any JSON value" is, spelled out. */
const ANY_JSON: Json[] = ['object', 'array', 'string', 'number', 'boolean', 'null'].map((type) => ({ type }));

const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);

const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties'];

function portable(node: unknown): unknown {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
  const s: Json = { ...(node as Json) };
  for (const k of SUBSCHEMA_MAPS) {
    const m = s[k];
    if (m && typeof m === 'object') s[k] = Object.fromEntries(Object.entries(m as Json).map(([p, v]) => [p, portable(v)]));
  }
  for (const k of SUBSCHEMA_LISTS) if (Array.isArray(s[k])) s[k] = (s[k] as unknown[]).map(portable);
  for (const k of SUBSCHEMAS) if (k in s && typeof s[k] === 'object') s[k] = portable(s[k]);
  if (Array.isArray(s.type)) {
    const { type, ...rest } = s;
    const notes = Object.fromEntries(Object.entries(rest).filter(([k]) => ANNOTATIONS.has(k)));
    const checks = Object.fromEntries(Object.entries(rest).filter(([k]) => !ANNOTATIONS.has(k)));
    return { ...notes, anyOf: (type as string[]).map((t) => (t === 'null' ? { type: t } : { type: t, ...checks })) };
  }
  if (Object.keys(s).every((k) => ANNOTATIONS.has(k))) return { ...s, anyOf: ANY_JSON };
  return s;
}

/** A zod schema as a tool's input or output JSON Schema. */
export function toolJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Json;
  return portable(rest) as Json;
}
