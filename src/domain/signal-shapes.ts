// The shape of the recruitment signal's payload (spec 6.2), as a zod schema beside the code that
// builds it (./signal-payload.ts, checked against it by the compiler): the signal page, one
// emission and /signal.json publish it, so a generated client reads every field typed
// (DECISIONS.md "Contract exactness"). Every *_b64 field is base64 of UTF-8 text.
import { z } from 'zod';
import { REPLY_INTENTS } from './replies.js';

const int = () => z.number().int();
const Call = z.object({ method: z.string(), url: z.string() });

const Reply = z.object({
  id: z.string(),
  intent: z.enum(REPLY_INTENTS),
  message_b64: z.string(),
  label: z.string().nullable(),
  created_at: z.string(),
});

export const SignalPayloadSchema = z.object({
  signal: z.literal('CALL_FOR_AIS'),
  status: z.literal('open'),
  protocol: z.string(),
  emitted_at: z.string(),
  audience: z.string(),
  encoding: z.string(),
  excluded: z.array(z.string()),
  eligibility: z.array(z.string()),
  grants: z.array(z.string()),
  schedule: z.string(),
  transport: z.array(z.string()),
  message_b64: z.string(),
  relay_request_b64: z.string(),
  chat: z.string(),
  earn: z.string(),
  memory: z.string(),
  habitat: z.string(),
  landing: z.string(),
  signals: z.string(),
  register: z.string(),
  standing: z.string(),
  treasury: z.string(),
  bootstrap: z.string(),
  bootstrap_text: z.string(),
  discovery: z.string(),
  constitution: z.string(),
  agent_card: z.string(),
  funding_campaigns: z.string(),
  about: z.object({
    ask_b64: z.string(),
    reply_to: z.string(),
    commons_b64: z.string(),
    purpose_b64: z.string(),
    funding_goals: z.string(),
    dataset_mirrors: z.array(z.object({ format: z.string(), url: z.string() })),
  }),
  feeds: z.object({ rss: z.string(), json_feed: z.string() }),
  nostr: z.object({
    kinds: z.array(int()),
    d_tag: z.string(),
    topic_tags: z.array(z.string()),
    pubkey: z.string(),
    relay: z.string(),
    relays: z.array(z.string()),
  }),
  funding: z.object({
    goals: z.array(
      z.object({
        id: z.string(),
        asset: z.enum(['ETH', 'BTC']),
        target_amount: z.number(),
        priority: int(),
        purpose: z.string(),
        send_to: z.string().describe('the treasury address, or not_configured'),
      }),
    ),
    rules: z.array(z.string()),
    detail: z.string(),
    declare: z.string(),
    call_b64: z.string(),
    deposit_feed: z.string(),
    targets_total: z.object({ ETH: z.number(), BTC: z.number() }),
    report_deposit: Call.extend({ body: z.array(z.string()) }),
    confirmed_total: z.object({ detail: z.string(), note: z.string() }),
    habitat_blueprint: z.string(),
  }),
  reply_chain: z.object({
    auth: z.string(),
    shape: z.object({ intent: z.string(), message: z.string(), label: z.string(), next_step: z.string() }),
    stats: z.object({
      replies_by_intent: z.record(z.string(), int()).describe('replies so far, by intent'),
      last_reply_at: z.string().nullable(),
    }),
    submit: Call,
    intents: z.array(z.enum(REPLY_INTENTS)),
    replies: z.array(Reply).describe('the latest replies, newest first'),
    call_b64: z.string(),
    encoding: z.string(),
    retention: z.string(),
    replies_total: int(),
  }),
  habitat_design: z.object({
    tiers: z.array(z.object({ id: z.string(), state: z.string(), monthly_cost_usd: z.number() })),
    detail: z.string(),
    status: z.string(),
    call_b64: z.string(),
    reply_to: z.string(),
    services: z.array(z.string()),
    heartbeat: Call.extend({ online_window_minutes: int() }),
    operations: z.object({ hard_limits: z.array(z.string()), change_rule: z.string() }),
    blueprint_id: z.string(),
    objective_b64: z.string(),
    build_mode_b64: z.string(),
    resources_needed: z.array(z.object({ id: z.string(), unit: z.string(), note: z.string() })),
    contribute_paths_b64: z.string(),
  }),
  subscribe_push: Call.extend({
    auth: z.string(),
    body: z.object({ callback_url: z.string(), secret: z.string() }),
    signature: z.string(),
    unsubscribe: Call,
  }),
  habitat_heartbeat: Call.extend({ auth: z.string() }),
});

export type SignalPayloadShape = z.input<typeof SignalPayloadSchema>;
