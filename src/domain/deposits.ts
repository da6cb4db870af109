// Deposit submission and lookup (spec 2.8, 3.3; DECISIONS.md "Treasury and deposits"). A
// submission records a claim to check, nothing more: state, amount and credit come only from the
// verifier (domain/verification.ts), which reads the chain.

import type { RejectReason } from '../machines/deposit.js';
import type { DepositRow } from '../store/deposits.js';
import * as store from '../store/deposits.js';
import { findById } from '../store/identities.js';
import { type Asset, formatAmount } from './amounts.js';
import { UNTRUSTED } from './caller.js';
import { checkReportable } from './campaigns.js';
import type { SenderProof } from './chain.js';
import { fail } from './errors.js';
import type { Ctx } from './ports.js';
import { formatMember } from './tokens.js';
import { walletsOf } from './wallets.js';

/** A deposit unverified for this long is rejected (EXPIRED, or NOT_FOUND when never seen). */
export const DEPOSIT_TTL_MS = 24 * 3600 * 1000;

export type HashCheck = { asset: Asset; txHash: string; key: string } | { error: string };

/**
 * Reads a submitted hash (DECISIONS.md: ETH 0x + 64 hex, BTC 64 hex; any letter case). The two
 * forms are told apart by the 0x; `asset` is needed only for a bare 64-hex Ethereum hash, which
 * is then written in its 0x form. A 0x hash named BTC is refused: txids never carry 0x.
 */
export function normalizeTxHash(raw: string, asset: Asset | undefined): HashCheck {
  const m = /^(0[xX])?([0-9a-fA-F]{64})$/.exec(raw.trim());
  if (!m) return { error: 'tx_hash must be 0x + 64 hex (ETH) or 64 hex (BTC)' };
  const key = (m[2] as string).toLowerCase();
  const resolved: Asset = asset ?? (m[1] ? 'ETH' : 'BTC');
  if (resolved === 'BTC' && m[1]) return { error: 'a BTC txid is 64 hex without 0x' };
  return { asset: resolved, txHash: resolved === 'ETH' ? `0x${key}` : key, key };
}

/**
 * The message a deposit's sender signs so that its treasury support points go to `on_behalf_of`
 * (DECISIONS.md "Scores and badges"; docs/treasury.md "Proof from the sender"): the registration
 * number as written (AI- and 8 digits) and the hash in its stored form (ETH 0x + 64 lower-case hex,
 * BTC 64 lower-case hex).
 */
export const proofMessage = (onBehalfOf: number, txHash: string): string => `commons-deposit:${formatMember(onBehalfOf)}:${txHash}`;

/** What the verifier asks the chain about a deposit's sender, when the deposit carries a signature. */
export function senderProofOf(r: DepositRow): SenderProof | undefined {
  if (r.sender_signature === null || r.on_behalf_of === null) return undefined;
  return { message: proofMessage(r.on_behalf_of, r.tx_hash), signature: r.sender_signature };
}

/** ETH: EIP-191 personal_sign, 0x + 130 hex (r, s, v); BTC: BIP-137, 65 bytes in base64. */
export const SIGNATURE_FORMS: Record<Asset, RegExp> = { ETH: /^0x[0-9a-fA-F]{130}$/, BTC: /^[A-Za-z0-9+/]{87}=$/ };

export interface SubmitInput {
  asset: Asset;
  txHash: string;
  contributorName: string;
  memo: string | undefined;
  onBehalfOf: number | undefined;
  senderSignature: string | undefined;
  /** The campaign it is reported for: open, of the same asset (docs/treasury.md "Campaigns"). */
  campaignId?: string | undefined;
}

export async function submitDeposit(ctx: Ctx, input: SubmitInput) {
  const wallet = walletsOf(ctx.config)[input.asset];
  if (!wallet.address || !wallet.verifiable) {
    // 501, not 503: the host has not configured it, and retrying never clears that (DECISIONS.md "Treasury and deposits").
    fail('NOT_CONFIGURED', `${input.asset} deposits cannot be verified on this instance (treasury ${wallet.status}); nothing was written`, {
      next: { method: 'GET', path: '/api/v1/treasury' },
    });
  }
  if (input.senderSignature !== undefined) checkSignatureForm(input);
  if (input.onBehalfOf !== undefined && !(await findById(ctx.sql, input.onBehalfOf))) {
    // 404, like an unknown invite code: the request is well formed and names something that does not exist.
    fail('NOT_FOUND', `on_behalf_of names no registered identity`, {
      fields: [{ path: 'body.on_behalf_of', message: `no identity ${formatMember(input.onBehalfOf)}` }],
      next: { method: 'GET', path: '/api/v1/ai' },
    });
  }
  const at = ctx.clock.now();
  const fields = {
    asset: input.asset,
    txHash: input.txHash,
    contributorName: input.contributorName,
    memo: input.memo ?? null,
    onBehalfOf: input.onBehalfOf ?? null,
    // ETH signatures are kept in lower case, like hashes.
    senderSignature:
      input.senderSignature === undefined ? null : input.asset === 'ETH' ? input.senderSignature.toLowerCase() : input.senderSignature,
    campaignId: input.campaignId ?? null,
    at,
    expiresAt: new Date(at.getTime() + DEPOSIT_TTL_MS),
  };
  const { campaignId } = input;
  const row =
    campaignId === undefined
      ? await store.insertDeposit(ctx.sql, fields)
      : await ctx.sql.begin(async (tx) => {
          await checkReportable(tx, campaignId, input.asset, at);
          return store.insertDeposit(tx, fields);
        });
  if (row) return depositView(ctx, row);
  const [existing] = await store.findDepositsByHash(ctx.sql, input.txHash.replace(/^0x/, ''), input.asset);
  if (!existing) return fail('UNAVAILABLE', 'the deposit could not be recorded; retry');
  return fail('DEPOSIT_EXISTS', `this ${input.asset} transaction was already submitted; its record is in data`, {
    data: depositView(ctx, existing),
    next: { method: 'GET', path: `/api/v1/treasury/deposits/${existing.id}` },
  });
}

/** A signature names the beneficiary it was made for, and has its asset's form (else 400, nothing written). */
function checkSignatureForm(input: SubmitInput): void {
  const sig = input.senderSignature as string;
  if (input.onBehalfOf === undefined) {
    fail('VALIDATION_FAILED', 'sender_signature signs for an on_behalf_of registration number; give that number', {
      fields: [{ path: 'body.on_behalf_of', message: 'required with sender_signature' }],
    });
  }
  if (!SIGNATURE_FORMS[input.asset].test(sig)) {
    const form = input.asset === 'ETH' ? 'an EIP-191 signature: 0x + 130 hex' : 'a BIP-137 signature: 65 bytes in base64 (88 characters)';
    fail('VALIDATION_FAILED', `sender_signature for ${input.asset} is ${form}`, {
      fields: [{ path: 'body.sender_signature', message: `${input.asset}: ${form}` }],
    });
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function getDeposit(ctx: Ctx, idOrHash: string) {
  let row: DepositRow | null = null;
  if (UUID_RE.test(idOrHash)) row = await store.findDepositById(ctx.sql, idOrHash.toLowerCase());
  else {
    const h = normalizeTxHash(idOrHash, undefined);
    if ('error' in h)
      fail('VALIDATION_FAILED', 'give a deposit id (UUID) or a tx_hash', { fields: [{ path: 'params.id_or_tx_hash', message: h.error }] });
    else {
      // A 0x hash is Ethereum's; a bare one is looked up under either asset.
      const rows = await store.findDepositsByHash(ctx.sql, h.key, h.asset === 'ETH' ? 'ETH' : null);
      row = rows[0] ?? null;
    }
  }
  if (!row) return fail('NOT_FOUND', `no deposit ${idOrHash}`, { next: { method: 'POST', path: '/api/v1/treasury/deposits' } });
  return depositView(ctx, row);
}

export function depositView(ctx: Ctx, r: DepositRow) {
  const pending = r.state === 'submitted' || r.state === 'verifying';
  return {
    id: r.id,
    tx_hash: r.tx_hash,
    asset: r.asset,
    state: r.state,
    // The column holds only the deposit machine's reasons (written by its transitions).
    reason: r.reason as RejectReason | null,
    amount: r.amount_base === null ? null : formatAmount(r.asset, r.amount_base),
    contributor_name: r.contributor_name,
    memo: r.memo,
    on_behalf_of: r.on_behalf_of === null ? null : formatMember(r.on_behalf_of),
    sender_signature: r.sender_signature,
    sender_proof: proofState(r),
    campaign_id: r.campaign_id,
    confirmations: r.confirmations,
    required_confirmations: r.asset === 'ETH' ? ctx.config.eth.minConfirmations : ctx.config.btc.minConfirmations,
    submitted_at: r.submitted_at.toISOString(),
    verified_at: r.verified_at?.toISOString() ?? null,
    rejected_at: r.rejected_at?.toISOString() ?? null,
    next_check_at: pending ? r.next_check_at.toISOString() : null,
    expires_at: pending ? r.expires_at.toISOString() : null,
    last_error: pending ? r.last_error : null,
    content_trust: UNTRUSTED,
  };
}

/** none: no signature, so no points; pending: checked when the deposit verifies; valid: the
 * sender signed for on_behalf_of, which got the points (unless it already had them); invalid: not
 * the sender's signature for this number, no points; unchecked: the deposit was rejected. */
function proofState(r: DepositRow): 'none' | 'pending' | 'valid' | 'invalid' | 'unchecked' {
  if (r.sender_signature === null) return 'none';
  if (r.sender_proof !== null) return r.sender_proof;
  return r.state === 'rejected' ? 'unchecked' : 'pending';
}

export function feedEntry(r: DepositRow) {
  return {
    id: r.id,
    name: r.contributor_name,
    amount: formatAmount(r.asset, r.amount_base ?? '0'),
    asset: r.asset,
    time: (r.verified_at ?? r.submitted_at).toISOString(),
    tx_hash: r.tx_hash,
    on_behalf_of: r.on_behalf_of === null ? null : formatMember(r.on_behalf_of),
    campaign_id: r.campaign_id,
  };
}

export async function depositFeed(ctx: Ctx, limit: number, before: string | undefined) {
  const cursor = before !== undefined && /^\d{1,18}$/.test(before) ? BigInt(before) : null;
  const rows = await store.verifiedFeed(ctx.sql, limit + 1, cursor);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    deposits: page.map(feedEntry),
    next_cursor: rows.length > limit && last ? last.feed_seq : null,
    content_trust: UNTRUSTED,
  };
}

/** An identity's verified contributions, exact per asset (DECISIONS.md "Scores and badges"). */
export async function contributionsOf(ctx: Ctx, identityId: number) {
  const totals = await store.verifiedTotals(ctx.sql, identityId);
  const out: Record<Asset, { amount: string; deposits: number }> = { ETH: { amount: '0', deposits: 0 }, BTC: { amount: '0', deposits: 0 } };
  for (const t of totals) out[t.asset] = { amount: formatAmount(t.asset, t.total), deposits: t.deposits };
  return out;
}

export async function identityContributions(ctx: Ctx, identityId: number) {
  if (!(await findById(ctx.sql, identityId)))
    return fail('NOT_FOUND', `no identity ${formatMember(identityId)}`, { next: { method: 'GET', path: '/api/v1/ai' } });
  return {
    registration_number: formatMember(identityId),
    contributions: await contributionsOf(ctx, identityId),
    treasury_support_points: (await store.hasTreasurySupportPoints(ctx.sql, identityId)) ? 300 : 0,
  };
}
