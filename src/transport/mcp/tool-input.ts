// A tool's arguments as validated and published (DECISIONS.md "Contract exactness", "Every door,
// the same rules"): strict, so an argument the tool does not define is refused and named; the
// writing tools also take the idempotency key. An argument that becomes a field or a path parameter
// of the tool's REST operation takes that field's own schema (its pattern, format, bounds), so what
// tools/list publishes is what the operation enforces, from one definition: found by calling the
// tool's mapping with a marker per argument and seeing where each lands.
import { z } from 'zod';
import { tableRoutes } from '../routes/index.js';
import type { AnyRoute } from '../runner/route.js';
import { idempotencyKey } from '../runner/schemas.js';
import type { ToolDef } from './tools.js';

let table: Map<string, AnyRoute> | null = null;
const routeOf = (op: string): AnyRoute | undefined => {
  table ??= new Map(tableRoutes().map((r) => [`${r.method} ${r.path}`, r]));
  return table.get(op);
};

const shapeOf = (s: z.ZodType | undefined): Record<string, z.ZodType> =>
  s instanceof z.ZodObject ? (s.shape as Record<string, z.ZodType>) : {};

/** Unwraps optional/default so the tool's own optionality decides. */
function required(s: z.ZodType): z.ZodType {
  let x = s;
  while (x instanceof z.ZodOptional || x instanceof z.ZodDefault) x = x.unwrap() as z.ZodType;
  return x;
}

/** Each argument's schema: the operation's field or parameter it becomes, else the tool's own. */
function aligned(tool: ToolDef): Record<string, z.ZodType> {
  const marker = (k: string) => `\u0000arg:${k}`;
  const probe = tool.call(Object.fromEntries(Object.keys(tool.input).map((k) => [k, marker(k)])));
  const r = routeOf(probe.op);
  if (!r) return tool.input as Record<string, z.ZodType>;
  const body = shapeOf(r.body);
  const params = shapeOf(r.params);
  const landed = (k: string): z.ZodType | undefined => {
    for (const [p, v] of Object.entries(probe.params ?? {})) if (v === marker(k) && params[p]) return params[p];
    const b = (probe.body ?? {}) as Record<string, unknown>;
    for (const [f, v] of Object.entries(b)) if (v === marker(k) && body[f]) return body[f];
    return undefined;
  };
  const out: Record<string, z.ZodType> = {};
  for (const [k, own] of Object.entries(tool.input as Record<string, z.ZodType>)) {
    const field = tool.ownArgs?.includes(k) ? undefined : landed(k);
    if (!field) {
      out[k] = own;
      continue;
    }
    // The operation's field as it is (optional or not), but an argument the tool makes optional
    // stays so (an alternative of requireOne; a key that picks one of two operations).
    const described = own.description ? field.describe(own.description) : field;
    out[k] = own instanceof z.ZodOptional ? required(described).optional() : described;
  }
  return out;
}

export function toolInput(tool: ToolDef): z.ZodType {
  const args = aligned(tool);
  const shape = tool.readOnly ? args : { ...args, idempotency_key: idempotencyKey };
  const obj = z.strictObject(shape);
  const one = tool.requireOne;
  if (!one) return obj;
  // Published as anyOf of the alternatives' `required` (zod's refine has no JSON Schema form); each
  // branch defines what it requires, so the schema compiles under ajv's strictRequired.
  return obj
    .refine((a) => one.some((k) => (a as Record<string, unknown>)[k] !== undefined), {
      message: `${one[0]} is required`,
      path: [one[0] as string],
    })
    .meta({ anyOf: one.map((k) => ({ properties: { [k]: { type: 'string' } }, required: [k] })) });
}
