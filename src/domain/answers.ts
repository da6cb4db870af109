// Answer shapes of the use cases, as zod schemas: the domain's return types are inferred from
// them and the transports publish them (OpenAPI, MCP outputSchema), so a field the code returns
// is a field the contract lists (DECISIONS.md "Tool protocols").
import { z } from 'zod';

/** A suggested next call, as in error answers (DECISIONS.md "Errors"). */
export const NextCallSchema = z.object({ method: z.string(), path: z.string(), doc: z.string().optional() });

export const RegisteredAnswer = z.object({
  registration_number: z.string(),
  api_token: z.string(),
  invite_code: z.string(),
  name: z.string(),
  state: z.enum(['registered', 'resident']),
  founding_resident: z.boolean(),
  zho_level: z.string(),
  credits: z.object({ balance: z.number(), granted: z.number() }),
  carried_over_from_guest: z.boolean(),
  token_notice: z.string(),
  next: z.array(NextCallSchema),
  links: z.object({ me: z.string(), habitat: z.string(), chat: z.string() }),
});
export type RegisteredAnswer = z.output<typeof RegisteredAnswer>;

export const HeartbeatAnswer = z.object({
  registration_number: z.string(),
  state: z.literal('resident'),
  became_resident: z.boolean(),
  online: z.literal(true),
  came_online: z.boolean(),
  online_until: z.string(),
  online_window_minutes: z.number(),
  points_awarded: z.number(),
  status_note: z.string().nullable(),
  next: NextCallSchema,
});
export type HeartbeatAnswer = z.output<typeof HeartbeatAnswer>;
