// The doors of the service and the writes each one carries, generated from the tables the service
// itself is built from (DECISIONS.md "Every door, the same rules"): the route table (REST, and the
// operator console's forms, each naming the operator operation it runs), the stream's write ops
// (src/transport/ws/ops.ts), the MCP tools that write (src/transport/mcp/tools.ts) and the A2A
// skills that write (src/transport/a2a/executor.ts). A new route, op, tool or skill is in the door
// matrix (test/e2e/door-matrix.test.ts) by being in its table; test/helpers/door-send.ts sends one
// request through a door.
import { JSONSchemaFaker } from 'json-schema-faker';
import { z } from 'zod';
import { SKILL_OF_OP } from '../../src/transport/a2a/executor.js';
import { classify } from '../../src/transport/admission/limits/policies.js';
import { allRoutes } from '../../src/transport/all-routes.js';
import { TOOLS } from '../../src/transport/mcp/tools.js';
import type { AnyRoute } from '../../src/transport/runner/route.js';
import { Router } from '../../src/transport/runner/router.js';
import { streamOps } from '../../src/transport/ws/ops.js';
import { samplesAjv, seeded } from './samples.js';

export type DoorName = 'rest' | 'stream-json' | 'stream-msgpack' | 'mcp' | 'a2a' | 'console';

/** One write as one door carries it. */
export interface Target {
  door: DoorName;
  /** The operation the door runs (for the console, the operator operation behind the form). */
  route: AnyRoute;
  /** The door's own name for it: the path, the op, the tool, the skill or the form's path. */
  name: string;
  /** Builds the door's arguments from the operation's params and body (MCP and A2A take them flat). */
  flat: boolean;
  /** The door's own published schema of its arguments, where it has one (an MCP tool's
   * inputSchema from tools/list): samples come from it rather than from the route's. */
  inputSchema?: Json;
}

type Json = Record<string, unknown>;

const isApiWrite = (r: AnyRoute) => r.method !== 'GET' && !r.raw && !r.switchesTo && !r.form;
const opKey = (r: AnyRoute) => `${r.method} ${r.path}`;

export function doorTargets(): Target[] {
  const routes = allRoutes();
  const router = new Router();
  for (const r of routes) router.add(r);
  const byKey = new Map(routes.map((r) => [opKey(r), r]));
  const out: Target[] = [];
  for (const r of routes.filter(isApiWrite)) out.push({ door: 'rest', route: r, name: opKey(r), flat: false });
  const ops = streamOps(router, async () => null) as unknown as Record<string, AnyRoute>;
  for (const [op, r] of Object.entries(ops)) {
    out.push({ door: 'stream-json', route: r, name: op, flat: true });
    out.push({ door: 'stream-msgpack', route: r, name: op, flat: true });
  }
  for (const t of TOOLS.filter((x) => !x.readOnly)) {
    const r = byKey.get(t.call({}).op);
    if (!r) throw new Error(`tool ${t.name}: no route`);
    out.push({ door: 'mcp', route: r, name: t.name, flat: true });
  }
  for (const [op, skill] of Object.entries(SKILL_OF_OP)) {
    const r = byKey.get(op);
    if (r && isApiWrite(r)) out.push({ door: 'a2a', route: r, name: skill, flat: true });
  }
  // Each console form runs the operator operation at the same path below /api/v1/operator/.
  for (const f of routes.filter((x) => x.form && x.path.startsWith('/operator/'))) {
    const r = byKey.get(`POST ${f.path.replace('/operator/', '/api/v1/operator/')}`);
    if (r) out.push({ door: 'console', route: r, name: f.path, flat: false });
  }
  return out;
}

/** The console's door for a token: its sign-in form (the other forms take the session it opens). */
export function consoleSignIn(): Target {
  const r = allRoutes().find((x) => x.method === 'POST' && x.path === '/operator/sign-in');
  if (!r) throw new Error('no console sign-in');
  return { door: 'console', route: r, name: r.path, flat: false };
}

/** The members of a route's class: its budget's policy (src/transport/admission/limits/policies.ts). */
export const classOf = (r: AnyRoute) => classify(r.method, r);

// ---- schema-valid samples (json-schema-faker, seeded) ------------------------------------------

const ajv = samplesAjv();
const checkers = new Map<string, (v: unknown) => boolean>();
function checker(s: Json): (v: unknown) => boolean {
  const { $schema: _, ...schema } = s;
  const id = JSON.stringify(schema);
  let c = checkers.get(id);
  if (!c) {
    const v = ajv.compile(schema);
    c = (x) => v(x) === true;
    checkers.set(id, c);
  }
  return c;
}

const jsonSchema = (s: z.ZodType | undefined): Json | undefined =>
  s ? (z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Json) : undefined;

/** A schema-valid value of a target's params and body (or of the door's own arguments), the same
 * for the same seed. */
export function sample(t: Pick<Target, 'route' | 'inputSchema'>, seed: number): { params: Record<string, string>; body: Json | undefined } {
  JSONSchemaFaker.option({ random: seeded(seed), alwaysFakeOptionals: false, fillProperties: false, maxItems: 2 });
  // Redrawn while ajv disagrees (the generator does not honour `not`: a zero amount).
  const gen = (s: Json | undefined): Json | undefined => {
    if (!s) return undefined;
    const ok = checker(s);
    for (let i = 0; i < 50; i++) {
      const v = JSONSchemaFaker.generate(s as never) as Json;
      if (ok(v)) return v;
    }
    throw new Error(`no valid sample of ${JSON.stringify(s).slice(0, 200)}`);
  };
  if (t.inputSchema) {
    const { idempotency_key: _, ...properties } = (t.inputSchema.properties ?? {}) as Json;
    return { params: {}, body: gen({ ...t.inputSchema, properties }) };
  }
  const params = (gen(jsonSchema(t.route.params)) ?? {}) as Record<string, string>;
  return { params, body: gen(jsonSchema(t.route.body)) };
}

export const pathOf = (r: AnyRoute, params: Record<string, string>): string =>
  r.path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(String(params[k] ?? '')));
