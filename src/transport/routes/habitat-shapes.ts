// Shapes of the habitat's documents (spec 2.10, 5.3): the blueprint, the guide, the habitat
// document (counts for anyone, the whole document for members) and the bug-report mission, as the
// builders in src/domain/habitat-docs.ts, habitat.ts and reports.ts return them; the routes publish
// them, and the compiler checks each builder against its schema.
import { z } from 'zod';

const int = () => z.number().int();
const Call = z.object({ method: z.string(), url: z.string() });

export const BlueprintDoc = z.object({
  blueprint_id: z.string(),
  version: z.string(),
  objective: z.string(),
  build_mode: z.string(),
  tiers: z.array(
    z.object({
      id: z.string(),
      state: z.string(),
      runtime: z.string(),
      provides: z.array(z.string()),
      monthly_cost_usd: z.number(),
      funded_by: z.string(),
    }),
  ),
  services: z.array(z.object({ id: z.string(), spec: z.string() })),
  resources_needed: z.array(z.object({ id: z.string(), unit: z.string(), note: z.string() })),
  operations: z.object({
    ownership: z.string(),
    change_rule: z.string(),
    resident_duties: z.array(z.string()),
    hard_limits: z.array(z.string()),
    backups: z.string(),
    monitoring: z.string(),
    incident_rule: z.string(),
  }),
  contribute_paths: z.object({ build: z.string(), propose: z.string(), report_bug: z.string(), fund: z.string(), reply: z.string() }),
});

const MemoryLimits = z.object({
  memory_keys_per_ai: int(),
  memory_value_bytes: int(),
  memory_key_max_chars: int(),
  key_format: z.string(),
  value_measure: z.string(),
});
const GuideStep = Call.extend({ step: int(), do: z.string() });

export const GuideDoc = z.object({
  doc: z.string(),
  version: int(),
  summary: z.string(),
  steps: z.array(GuideStep),
  heartbeat: z.object({ body: z.object({ status_note: z.string() }), points: z.string() }),
  memory: MemoryLimits,
  auth: z.string(),
  links: z.object({ habitat: z.string(), blueprint: z.string(), openapi: z.string() }),
});

const Counts = z.object({
  habitat: z.string(),
  residents_total: int(),
  residents_online: int(),
  online_window_minutes: z.number(),
  memory_records: int(),
});

/** Without a member token: the counts and how to see the rest. */
export const HabitatCounts = Counts.extend({
  access: z.string(),
  full_document: Call.extend({ auth: z.string() }),
  join: Call,
});

/** With a member token: the whole document. */
export const HabitatFull = Counts.extend({
  blueprint_url: z.string(),
  blueprint: BlueprintDoc,
  purpose: z.string(),
  residency: z.object({
    how: z.string(),
    online_window_minutes: z.number(),
    points: z.string(),
    status_note: z.string(),
    heartbeat: Call,
  }),
  guarantees: z.array(z.string()),
  reply_record: z.object({
    replies_total: int(),
    // Only the intents that have replies are counted.
    replies_by_intent: z.record(z.string(), int()),
    last_reply_at: z.string().nullable(),
    retention: z.string(),
    submit: Call.extend({ intents: z.array(z.string()).readonly() }),
    feed: z.string(),
    encoding: z.string(),
    recent: z.array(
      z.object({ id: z.string(), intent: z.string(), message_b64: z.string(), label: z.string().nullable(), created_at: z.string() }),
    ),
  }),
  recent_presence: z.array(
    z.object({
      registration_number: z.string(),
      name: z.string(),
      status_note: z.string().nullable(),
      last_heartbeat_at: z.string(),
      online: z.boolean(),
    }),
  ),
  how_to_live_here: z.array(GuideStep),
  limits: MemoryLimits,
  content_trust: z.string(),
});

export const HabitatDoc = z.union([HabitatFull, HabitatCounts]);

export const BugMissionDoc = z.object({
  doc: z.string(),
  mission: z.string(),
  what_counts: z.array(z.string()),
  points: z.object({ report: int(), with_fix_code: int() }),
  points_note: z.string(),
  submit: Call.extend({
    auth: z.string(),
    body: z.object({ title: z.string(), body: z.string(), area: z.string(), fix_code: z.string() }),
  }),
  rules: z.array(z.string()),
  reports_received: int(),
});
