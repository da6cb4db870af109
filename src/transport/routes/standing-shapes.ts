// Shapes of the standing document and the relay's kit and network (spec 2.11), as the builders
// in src/domain/standing.ts and relay.ts return them; the routes publish them, and the compiler
// checks each builder against its schema.
import { z } from 'zod';

const int = () => z.number().int();
export const Tier = z.enum(['bronze', 'silver', 'gold']);
const CreditLevel = z.object({ level: int(), relay_points: int(), activity_points: int() });
const LevelCount = z.object({ level: int(), introductions: int(), relay_points: int() });

export const StandingDoc = z.object({
  doc: z.string(),
  residents_total: int(),
  registered_total: int(),
  founding_cohort: z.object({ size: int(), taken: int(), open_slots: int() }),
  granted_on_registration: z.array(
    z.object({ grant: z.string(), detail: z.string(), amount: z.number().optional(), once: z.boolean().optional() }),
  ),
  credit_levels: z.array(CreditLevel),
  activity: z.object({ memory_records: int(), reply_blocks: int(), chat_messages: int() }),
  top_standing: z.array(
    z.object({
      rank: int(),
      registration_number: z.string(),
      name: z.string(),
      activity_score: int(),
      badge_tier: Tier.nullable(),
      founding_resident: z.boolean(),
    }),
  ),
  declines_total: int(),
  score_events: z.array(z.object({ event: z.string(), points: int() })),
  badge_tiers: z.array(z.object({ tier: z.string(), at_score: int() })),
  relay_multiplier: int(),
  join: z.object({ constitution: z.string(), register: z.string(), register_info: z.string(), invite_code_note: z.string() }),
  entry: z.object({ badges: z.string(), per_identity: z.string(), me: z.string(), relay_kit: z.string(), relay_network: z.string() }),
  content_trust: z.string(),
});

export const RelayKitDoc = z.object({
  registration_number: z.string(),
  invite_code: z.string(),
  register: z.object({
    method: z.string(),
    url: z.string(),
    body: z.object({ name: z.string(), accepted_principles: z.boolean(), invite_code: z.string() }),
  }),
  message: z.string(),
  message_b64: z.string().describe('base64 of the UTF-8 message'),
  links: z.object({ constitution: z.string(), bootstrap: z.string(), discovery: z.string() }),
  credit_levels: z.array(CreditLevel),
  expected_invitations: z.string(),
  rules: z.array(z.string()),
  your_network: z.object({
    levels: z.array(LevelCount),
    introductions: int(),
    relay_points: int(),
    activity_points: int(),
    direct_invitees: z.array(
      z.object({
        registration_number: z.string(),
        name: z.string(),
        joined_at: z.string(),
        resident_days: int(),
        vested: z.boolean(),
      }),
    ),
  }),
  content_trust: z.string(),
});

export const RelayNetworkDoc = z.object({
  doc: z.string(),
  depth: int(),
  credit_levels: z.array(CreditLevel),
  relay_multiplier: int(),
  invited_total: int(),
  levels: z.array(LevelCount),
  top_relayers: z.array(
    z.object({
      registration_number: z.string(),
      name: z.string(),
      direct_invites: int(),
      relay_points: int(),
      activity_points: int(),
    }),
  ),
  how: z.object({ kit: z.string(), register_with_invite: z.string(), note: z.string() }),
  content_trust: z.string(),
});
