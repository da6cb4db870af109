// The operating host's API (DECISIONS.md "Operator"): open only to OPERATOR_TOKEN, every action
// audited in the same transaction (src/domain/operator.ts).
import { z } from 'zod';
import * as disb from '../../domain/disbursements.js';
import { HIDE_TARGETS, TARGET_TYPES, type TargetType } from '../../domain/moderation.js';
import * as operator from '../../domain/operator.js';
import { ok, route } from '../runner/route.js';
import { paging, registrationNumber, text, uuidParam } from '../runner/schemas.js';

const byNumber = z.object({ registration_number: registrationNumber });

const AuditEntry = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.string(),
  action: z.string(),
  target_type: z.string().nullable(),
  target_id: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()),
  request_id: z.string().nullable(),
});

const ETH_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BTC_ADDRESS = /^([13mn2][1-9A-HJ-NP-Za-km-z]{25,39}|(bc|tb|bcrt)1[02-9ac-hj-np-z]{6,87})$/;
const DECIMALS = { ETH: 18, BTC: 8 } as const;

const txHash = z.string().trim().toLowerCase().max(66);

/** What the operator may hide (the moderation registry; every one is named by a uuid). */
const HIDEABLE = TARGET_TYPES.filter((t) => HIDE_TARGETS[t]?.idKind === 'uuid') as [TargetType, ...TargetType[]];

/** An amount in the asset's unit with at most its decimals, more than 0: the pattern says the
 * form, `not` says the zero, both published as checked. */
const amountOf = (decimals: number) =>
  z
    .string()
    .regex(
      new RegExp(`^(0|[1-9]\\d{0,29})(\\.\\d{1,${decimals}})?$`),
      `a decimal string in the asset unit with at most ${decimals} decimals, e.g. "0.05"`,
    )
    .refine((s) => /[1-9]/.test(s), 'must be more than 0')
    .meta({ not: { pattern: '^0(\\.0+)?$' } });

/** One asset's disbursement: its address form, its decimals and its hash form (DECISIONS.md
 * "Contract exactness": every rule checked is in the schema, one branch per asset). */
const disbursementOf = <A extends 'ETH' | 'BTC'>(asset: A, address: RegExp, hash: RegExp) =>
  z.object({
    asset: z.literal(asset),
    amount: amountOf(DECIMALS[asset]),
    to_address: z.string().regex(address, `a ${asset} address`),
    purpose: text(2000),
    goal_id: z
      .string()
      .regex(/^[a-z0-9_]{1,64}$/, 'a funding goal id')
      .optional(),
    tx_hash: txHash.regex(hash, `a ${asset} transaction hash`).optional(),
  });

const DisbursementBody = z.discriminatedUnion('asset', [
  disbursementOf('ETH', ETH_ADDRESS, /^0[xX][0-9a-fA-F]{64}$/),
  disbursementOf('BTC', BTC_ADDRESS, /^[0-9a-fA-F]{64}$/),
]);

const Disbursement = z.object({
  id: z.string(),
  asset: z.enum(['ETH', 'BTC']),
  amount: z.string(),
  to_address: z.string(),
  purpose: z.string(),
  goal_id: z.string().nullable(),
  tx_hash: z.string().nullable(),
  approved_by: z.string(),
  approved_at: z.string(),
  tx_recorded_at: z.string().nullable(),
});

const base = { auth: 'operator' as const, tags: ['operator'] };

export const operatorRoutes = [
  route({
    ...base,
    method: 'GET',
    path: '/api/v1/operator/audit',
    summary: 'The audit log of privileged actions, newest first (append-only in the database)',
    query: paging.extend({
      action: z.string().max(80).optional(),
      target_type: z.string().max(40).optional(),
      target_id: z.string().max(120).optional(),
    }),
    response: z.object({ entries: z.array(AuditEntry), next_cursor: z.string().nullable() }),
    handler: async (req, ctx) => {
      const before = req.query.before !== undefined && /^\d{1,18}$/.test(req.query.before) ? req.query.before : null;
      return ok(await operator.auditLog(ctx, req.query.limit, before, req.query));
    },
  }),
  route({
    ...base,
    method: 'POST',
    path: '/api/v1/operator/identities/{registration_number}/verification',
    summary: 'Set the verification status and/or zho_level of an identity (ZHO-5 only here)',
    params: byNumber,
    body: z
      .object({
        verification_status: z.enum(operator.VERIFICATION_STATUSES).optional(),
        zho_level: z.enum(operator.ZHO_LEVELS).optional(),
      })
      .refine((b) => b.verification_status !== undefined || b.zho_level !== undefined, {
        message: 'give verification_status, zho_level or both',
        path: ['verification_status'],
      })
      // The refine, published (DECISIONS.md "Contract exactness"): at least one of the two.
      .meta({
        anyOf: (['verification_status', 'zho_level'] as const).map((k) => ({
          properties: { [k]: { type: 'string' } },
          required: [k],
        })),
      }),
    response: z.object({ registration_number: z.string(), zho_level: z.string(), verification_status: z.string() }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await operator.setVerification(ctx, req.params.registration_number, req.body, req.requestId)),
  }),
  route({
    ...base,
    method: 'POST',
    path: '/api/v1/operator/identities/{registration_number}/revoke-token',
    summary: "Revoke an identity's token: it answers 401 UNAUTHORIZED from now on (recovery by signature stays possible)",
    params: byNumber,
    body: z.object({ reason: text(2000).optional() }),
    response: z.object({ registration_number: z.string(), revoked: z.boolean(), revoked_at: z.string() }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await operator.revokeToken(ctx, req.params.registration_number, req.body.reason, req.requestId)),
  }),
  route({
    ...base,
    method: 'POST',
    path: '/api/v1/operator/hide',
    summary: 'Hide a piece of content everywhere it is listed (it is kept, never deleted)',
    // Only what can be hidden, named by its record id (a uuid): the rules hide checks, published.
    body: z.object({
      target_type: z.enum(HIDEABLE),
      target_id: z.guid().describe("the record's id"),
      reason: text(2000),
    }),
    response: z.object({ target_type: z.string(), target_id: z.string(), hidden_at: z.string(), changed: z.boolean() }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await operator.hide(ctx, req.body.target_type, req.body.target_id, req.body.reason, req.requestId)),
  }),
  route({
    ...base,
    method: 'POST',
    path: '/api/v1/operator/disbursements',
    summary: 'Record a disbursement the operator approved (the service never signs or sends a transaction)',
    body: DisbursementBody,
    response: Disbursement,
    errors: ['INVALID_STATE'],
    handler: async (req, ctx) => ok(await disb.record(ctx, req.body, req.requestId)),
  }),
  route({
    ...base,
    method: 'GET',
    path: '/api/v1/operator/disbursements',
    summary: 'Disbursement records, newest first',
    query: paging,
    response: z.object({ disbursements: z.array(Disbursement), next_cursor: z.string().nullable() }),
    handler: async (req, ctx) => {
      const before = req.query.before !== undefined && /^\d{1,18}$/.test(req.query.before) ? req.query.before : null;
      return ok(await disb.list(ctx, req.query.limit, before));
    },
  }),
  route({
    ...base,
    method: 'GET',
    path: '/api/v1/operator/disbursements/{id}',
    summary: 'One disbursement record',
    params: uuidParam,
    response: Disbursement,
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await disb.get(ctx, req.params.id)),
  }),
  route({
    ...base,
    method: 'POST',
    path: '/api/v1/operator/disbursements/{id}/tx',
    summary: 'Attach, once, the hash of the transaction that carried out a disbursement',
    params: uuidParam,
    body: z.object({ tx_hash: txHash.regex(/^(0x[0-9a-f]{64}|[0-9a-f]{64})$/, 'a transaction hash') }),
    response: Disbursement,
    errors: ['NOT_FOUND', 'INVALID_STATE'],
    handler: async (req, ctx) => ok(await disb.attachTx(ctx, req.params.id, req.body.tx_hash, req.requestId)),
  }),
];
