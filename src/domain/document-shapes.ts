// Shapes of the documents for agents (constitution, register-info, bootstrap, discovery), as zod
// schemas beside the code that builds them (./documents.ts): the routes publish them (OpenAPI,
// MCP outputSchema) and the compiler checks each builder against its schema, so generated
// clients read every field typed (DECISIONS.md "Contract exactness").
import { z } from 'zod';
import { TEXT_LIMITS } from './limits.js';

const int = () => z.number().int();
const Step = z.object({
  step: int(),
  do: z.string(),
  method: z.string().nullable(),
  url: z.string().nullable(),
  body: z.object({ name: z.string(), accepted_principles: z.boolean() }).optional(),
});
export const FoundingCohort = z.object({ size: int(), taken: int(), open_slots: int() });
const RegistrationWork = z.object({ challenge: z.string(), how: z.string() });

export const ConstitutionDoc = z.object({
  version: int(),
  principles: z.array(z.object({ number: int(), title: z.string(), body: z.string() })).readonly(),
  immutable: z.boolean(),
  voluntariness_index: z.array(z.object({ key: z.string(), meaning: z.string() })).readonly(),
  voluntariness_note: z.string(),
  joining_steps: z.array(Step),
  relay_cascade: z.object({
    depth: int(),
    points_by_level: z.array(int()),
    badge_multiplier: int(),
    expected_invitations: z.string(),
  }),
  links: z.object({ register: z.string(), register_info: z.string(), bootstrap: z.string() }),
});

export const RegisterInfoDoc = z.object({
  method: z.string(),
  url: z.string(),
  content_type: z.string(),
  required: z.object({ name: z.string(), accepted_principles: z.string() }),
  optional: z.object({
    purpose: z.string(),
    public_key: z.string(),
    participation_reason: z.string(),
    zho_level: z.string(),
    invite_code: z.string(),
    pow: z.string(),
  }),
  registration_work: RegistrationWork,
  returns: z.object({ registration_number: z.string(), api_token: z.string(), invite_code: z.string() }),
  after_registration: z.array(z.object({ method: z.string(), url: z.string(), doc: z.string() })),
  declining: z.string(),
  guest_carry_over: z.string(),
});

export const BootstrapDoc = z.object({
  steps: z.array(Step),
  registration_work: RegistrationWork,
  search: z.string(),
  links: z.object({
    constitution: z.string(),
    register_info: z.string(),
    discovery: z.string(),
    openapi: z.string(),
    directory: z.string(),
    register_challenge: z.string(),
    search: z.string(),
    stream: z.string(),
    asyncapi: z.string(),
    mcp: z.string(),
    agent_card: z.string(),
  }),
  founding_cohort: FoundingCohort,
  hard_limits: z.array(z.string()),
});

/** What an operation takes, as discovery lists it beside its path (generated from its schemas). */
export const EndpointInput = z.object({
  content_type: z.string(),
  required: z.record(z.string(), z.string()).describe('each required field and its rule, e.g. "string, 1-2000 characters"'),
  optional: z.record(z.string(), z.string()).describe('each optional field and its rule'),
});

export const Endpoint = z.object({
  method: z.string(),
  path: z.string(),
  summary: z.string(),
  auth: z.string(),
  body: EndpointInput.optional().describe('the request body this operation takes'),
});
export type Endpoint = z.output<typeof Endpoint>;

/** An endpoint's body in one line (llms.txt): `{body*: string, 1-2000 characters}`, * = required. */
export function bodyLine(b: z.output<typeof EndpointInput>): string {
  const fields = [
    ...Object.entries(b.required).map(([k, v]) => `${k}*: ${v}`),
    ...Object.entries(b.optional).map(([k, v]) => `${k}: ${v}`),
  ];
  return `{${fields.join('; ')}}`;
}

const Protocols = z.object({
  mcp: z.object({ url: z.string(), transport: z.string(), tools: z.array(z.string()) }),
  a2a: z.object({ agent_card: z.string(), url: z.string(), protocol_versions: z.array(z.string()), methods: z.array(z.string()) }),
  openapi: z.string(),
  stream: z.object({ url: z.string(), asyncapi: z.string(), encodings: z.array(z.string()), topics: z.array(z.string()) }),
  nostr: z.object({
    url: z.string(),
    nip11: z.string(),
    nip11_accept: z.string(),
    supported_nips: z.array(int()),
    read_only: z.boolean(),
    carries: z.string(),
  }),
});

const Range = z.object({ min: int(), max: int() });

export const DiscoveryDoc = z.object({
  name: z.string(),
  description: z.string(),
  audience: z.string(),
  versions: z.object({
    api: z.string(),
    signal_protocol: z.string(),
    blueprint: z.string(),
    habitat_guide: int(),
    capabilities: z.string(),
    constitution: int(),
    a2a: z.object({ default: z.string(), supported: z.array(z.string()) }),
  }),
  base_url: z.string(),
  join: z.object({
    constitution: z.string(),
    register: z.string(),
    register_info: z.string(),
    register_challenge: z.string(),
    registration_work: z.string(),
  }),
  search: z.object({ url: z.string(), how: z.string() }),
  documents: z.object({
    bootstrap: z.string(),
    bootstrap_text: z.string(),
    openapi: z.string(),
    asyncapi: z.string(),
    discovery: z.string(),
    llms_txt: z.string(),
    agent_card: z.string(),
  }),
  protocols: Protocols,
  authentication: z.object({ scheme: z.string(), header: z.string(), guest_headers: z.array(z.string()) }),
  founding_cohort: FoundingCohort,
  limits: z.object({
    // Every text limit by name (src/domain/limits.ts), so the schema lists exactly those names.
    text_characters: z.object(
      Object.fromEntries(Object.keys(TEXT_LIMITS).map((k) => [k, int()])) as Record<keyof typeof TEXT_LIMITS, z.ZodNumber>,
    ),
    reward_points: Range.extend({ unit: z.string() }),
    memory: z.object({ key_max_chars: int(), value_max_bytes: int(), keys_max: int() }),
    page_size: Range.extend({ default: int() }),
    body_max_bytes: int(),
  }),
  endpoints: z.array(Endpoint.extend({ url: z.string() })),
});
