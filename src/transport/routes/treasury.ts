// Treasury routes (spec 2.8, 3.3, 4; DECISIONS.md "Treasury and deposits").

import { z } from 'zod';
import { ASSETS } from '../../domain/amounts.js';
import { CampaignSchema, DepositFeedEntrySchema } from '../../domain/campaign-schemas.js';
import * as deposits from '../../domain/deposits.js';
import { fail } from '../../domain/errors.js';
import { TEXT_LIMITS } from '../../domain/limits.js';
import { treasuryDocument } from '../../domain/treasury.js';
import { ok, route } from '../runner/route.js';
import { displayName, paging, registrationNumber, text } from '../runner/schemas.js';

/** A hash as deposits take it (src/domain/deposits.ts normalizeTxHash): ETH 0x + 64 hex, BTC 64 hex. */
const TX_HASH_FORM = /^(0[xX])?[0-9a-fA-F]{64}$/;

export const DepositBody = z
  .object({
    tx_hash: z
      .string()
      .regex(TX_HASH_FORM, 'ETH: 0x + 64 hex; BTC: 64 hex')
      .describe('the transaction hash (ETH 0x + 64 hex) or txid (BTC 64 hex), any letter case'),
    asset: z.enum(ASSETS).optional().describe('ETH or BTC; inferred from the hash (0x = ETH); needed only for an ETH hash sent without 0x'),
    contributor_name: displayName(TEXT_LIMITS.contributor_name),
    memo: text(TEXT_LIMITS.memo, 0).optional(),
    on_behalf_of: registrationNumber.optional().describe('an existing registration number to credit'),
    sender_signature: z
      .string()
      .regex(/^(0x[0-9a-fA-F]{130}|[A-Za-z0-9+/]{87}=)$/, 'ETH: 0x + 130 hex (EIP-191); BTC: 88 base64 characters (BIP-137)')
      .optional()
      .describe(
        'proof from the sender, needed for the 300 treasury_support points of on_behalf_of: a signature over ' +
          '`commons-deposit:<on_behalf_of>:<tx_hash>` (tx_hash as stored: ETH 0x + 64 lower-case hex, BTC 64 lower-case hex) ' +
          'by the transaction\'s sending address: ETH EIP-191 personal_sign (0x + 130 hex); BTC a BIP-137 "Bitcoin Signed Message" ' +
          "signature (base64) by the key of one of the transaction's inputs (P2PKH, P2WPKH or P2SH-P2WPKH). Without it the " +
          'deposit verifies and counts, and nobody gets its points. Points also need a verified amount of at least the ' +
          "treasury document's support_minimum (default 0.001 ETH, 0.00005 BTC): below it the deposit adds its amount only",
      ),
    campaign_id: z
      .uuid()
      .optional()
      .describe('an open campaign of the same asset this deposit is for; its verified amount counts toward that campaign'),
  })
  // A BTC txid has no 0x (docs/treasury.md), checked here and published: asset ETH or left out
  // (then the 0x tells the forms apart), or a hash without 0x.
  .refine((b) => b.asset !== 'BTC' || !/^0x/i.test(b.tx_hash), { message: 'a BTC txid is 64 hex without 0x', path: ['tx_hash'] })
  .meta({
    anyOf: [{ properties: { asset: { const: 'ETH' } } }, { properties: { tx_hash: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' } } }],
  });

const Amount = z.string().describe("decimal string in the asset's own unit, exact");

export const Deposit = z.object({
  id: z.uuid(),
  tx_hash: z.string(),
  asset: z.enum(ASSETS),
  state: z.enum(['submitted', 'verifying', 'verified', 'rejected']),
  reason: z.enum(['NOT_FOUND', 'WRONG_RECIPIENT', 'WRONG_CHAIN', 'FAILED_TX', 'EXPIRED']).nullable(),
  amount: Amount.nullable().describe('the on-chain value, set on verification; null before'),
  contributor_name: z.string(),
  memo: z.string().nullable(),
  on_behalf_of: z.string().nullable(),
  sender_signature: z.string().nullable(),
  sender_proof: z
    .enum(['none', 'pending', 'valid', 'invalid', 'unchecked'])
    .describe(
      "the sender's proof: none (no signature: no points), pending (checked on verification), valid (the sender signed for on_behalf_of, which got the points if the amount reached the support_minimum and it had none yet), invalid (not the sender's signature for this number: no points), unchecked (rejected)",
    ),
  campaign_id: z.string().nullable().describe('the campaign it was reported for, or null'),
  confirmations: z.number().int().nullable(),
  required_confirmations: z.number().int(),
  submitted_at: z.string(),
  verified_at: z.string().nullable(),
  rejected_at: z.string().nullable(),
  next_check_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  last_error: z.string().nullable(),
  content_trust: z.string(),
});

export const FeedEntry = DepositFeedEntrySchema;

const PerAsset = <T extends z.ZodType>(t: T) => z.object({ ETH: t, BTC: t });

const Goal = z.object({
  id: z.string(),
  purpose: z.string(),
  asset: z.enum(ASSETS),
  target_amount: z.number(),
  target_amount_exact: Amount,
  priority: z.number().int(),
  status: z.enum(['open', 'funded', 'closed']),
  send_to: z.string(),
  confirmed_amount: z.number(),
  confirmed_amount_exact: Amount,
  remaining_amount: z.number(),
  remaining_amount_exact: Amount,
});

export const TreasuryDoc = z.object({
  status: z.enum(['active', 'partially_configured', 'not_configured']),
  funding_goals: z.array(Goal),
  funding_goal_total: PerAsset(z.number()),
  funding_goal_total_exact: PerAsset(Amount),
  confirmed_contributions: PerAsset(Amount),
  confirmed_deposits: PerAsset(z.number().int()).describe('how many deposits are verified, per asset'),
  how_to_contribute: z.array(
    z.object({ id: z.string(), step: z.number(), how: z.string(), endpoint: z.string().nullable(), requires_token: z.boolean() }),
  ),
  contribution_rules: z.array(z.string()),
  allocation_rules: z.array(z.string()),
  network: z.string(),
  chain_id: z.number(),
  asset: z.string(),
  custody_type: z.string(),
  treasury_wallet_address: z.string(),
  wallets: z.array(
    z.object({
      label: z.string(),
      network: z.string(),
      chain_id: z.number(),
      asset: z.string(),
      address: z.string(),
      status: z.enum(['active', 'not_configured']),
      min_confirmations: z.number().int(),
      custody_type: z.string(),
      deposit_verification: z.enum(['available', 'not_configured']),
    }),
  ),
  contribution_note: z.string(),
  sponsor_path: z.object({
    summary: z.string(),
    field: z.literal('on_behalf_of'),
    format: z.string(),
    endpoint: z.string(),
    example: z.object({
      tx_hash: z.string(),
      contributor_name: z.string(),
      memo: z.string(),
      on_behalf_of: z.string(),
      sender_signature: z.string(),
    }),
  }),
  sender_proof: z.object({
    field: z.literal('sender_signature'),
    summary: z.string(),
    message: z.string(),
    message_rules: z.string(),
    eth: z.string(),
    btc: z.string(),
  }),
  support_minimum: z
    .object({ ETH: Amount, BTC: Amount, points: z.number().int(), summary: z.string() })
    .describe(
      'value before points: the least verified amount (TREASURY_SUPPORT_MIN_ETH / _BTC) that earns the treasury_support points and counts as a campaign contribution; a smaller deposit verifies and adds its exact amount only',
    ),
  notice: z.string(),
  campaigns: z.object({ url: z.string(), open: z.array(CampaignSchema), rules: z.array(z.string()) }),
  links: z.object({ deposits: z.string(), submit: z.string(), campaigns: z.string(), earn: z.string() }),
});

export const treasuryRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/treasury',
    auth: 'none',
    summary: 'The treasury: funding goals with verified amounts, wallets, how to contribute, rules',
    tags: ['treasury'],
    response: TreasuryDoc,
    handler: async (_req, ctx) => ok(await treasuryDocument(ctx)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/treasury/deposits',
    auth: 'none',
    summary: 'Public feed of verified deposits, newest first',
    tags: ['treasury'],
    query: paging,
    response: z.object({ deposits: z.array(FeedEntry), next_cursor: z.string().nullable(), content_trust: z.string() }),
    handler: async (req, ctx) => ok(await deposits.depositFeed(ctx, req.query.limit, req.query.before)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/treasury/deposits',
    auth: 'none',
    summary: 'Submit a transaction for on-chain verification (no token needed); the amount comes from the chain',
    tags: ['treasury'],
    body: DepositBody,
    response: Deposit,
    errors: ['NOT_FOUND', 'INVALID_STATE', 'DEPOSIT_EXISTS', 'NOT_CONFIGURED', 'UNAVAILABLE'],
    handler: async (req, ctx) => {
      const h = deposits.normalizeTxHash(req.body.tx_hash, req.body.asset);
      if ('error' in h) return fail('VALIDATION_FAILED', h.error, { fields: [{ path: 'body.tx_hash', message: h.error }] });
      return ok(
        await deposits.submitDeposit(ctx, {
          asset: h.asset,
          txHash: h.txHash,
          contributorName: req.body.contributor_name,
          memo: req.body.memo === '' ? undefined : req.body.memo,
          onBehalfOf: req.body.on_behalf_of,
          senderSignature: req.body.sender_signature,
          campaignId: req.body.campaign_id?.toLowerCase(),
        }),
      );
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/treasury/deposits/{id_or_tx_hash}',
    auth: 'none',
    summary: 'One deposit and its verification state, by id or by tx_hash',
    tags: ['treasury'],
    // Either form, as getDeposit reads it: a deposit id, or a hash in either asset's form.
    params: z.object({
      id_or_tx_hash: z.union([
        z.guid().describe('a deposit id'),
        z.string().regex(TX_HASH_FORM).describe('a tx_hash (ETH 0x + 64 hex, BTC 64 hex)'),
      ]),
    }),
    response: Deposit,
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await deposits.getDeposit(ctx, req.params.id_or_tx_hash)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/treasury/contributions/{registration_number}',
    auth: 'none',
    summary: "An identity's verified contributions, exact per asset",
    tags: ['treasury'],
    params: z.object({ registration_number: registrationNumber }),
    response: z.object({
      registration_number: z.string(),
      contributions: PerAsset(z.object({ amount: Amount, deposits: z.number() })),
      treasury_support_points: z.number(),
    }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await deposits.identityContributions(ctx, req.params.registration_number)),
  }),
];
