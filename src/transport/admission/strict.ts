// Request bodies refuse fields they do not define (DECISIONS.md "Contract exactness": unknown
// fields are refused, as Stripe does). Every route's body schema is made strict here, once, when
// the route is declared: each object in it, however deep, gets `catchall: never`, so validation
// answers VALIDATION_FAILED naming the field and the OpenAPI document, generated from the same
// schema, publishes `additionalProperties: false`. An object that declares its own catchall (a
// record of free keys) keeps it; free JSON values (memory) are not objects with a shape.
import { z } from 'zod';

type Def = Record<string, unknown> & { type: string };
type Node = z.ZodType & { clone(def: Def): z.ZodType };

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'nonoptional', 'catch']);

export function strict<T extends z.ZodType>(schema: T): T {
  return strictly(schema) as T;
}

function strictly(schema: z.ZodType): z.ZodType {
  const node = schema as Node;
  const def = node._zod.def as unknown as Def;
  let next: Def | null = null;
  if (def.type === 'object') {
    const shape = Object.fromEntries(Object.entries(def.shape as Record<string, z.ZodType>).map(([k, v]) => [k, strictly(v)]));
    next = { ...def, shape, catchall: def.catchall ?? z.never() };
  } else if (WRAPPERS.has(def.type)) next = { ...def, innerType: strictly(def.innerType as z.ZodType) };
  else if (def.type === 'array') next = { ...def, element: strictly(def.element as z.ZodType) };
  else if (def.type === 'pipe') next = { ...def, in: strictly(def.in as z.ZodType) };
  else if (def.type === 'union') next = { ...def, options: (def.options as z.ZodType[]).map(strictly) };
  if (!next) return schema;
  const out = node.clone(next);
  // Descriptions live in the global registry, keyed by the schema they were given to.
  const meta = z.globalRegistry.get(schema);
  if (meta) z.globalRegistry.add(out, meta);
  return out;
}
