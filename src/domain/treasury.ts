// The treasury document (spec 2.8). Goals' confirmed and remaining amounts are computed from
// verified deposits only: each asset's verified total fills that asset's goals in priority order
// (goals the operator closed take nothing); numbers for the spec's `number` fields, and exact
// `*_exact` strings beside them (DECISIONS.md "Field names").

import { verifiedTotals } from '../store/deposits.js';
import { listGoals, openCampaigns } from '../store/funding.js';
import { ASSETS, type Asset, asNumber, formatAmount } from './amounts.js';
import { campaignRules, campaignView } from './campaign-view.js';
import type { Ctx } from './ports.js';
import { POINTS } from './scores.js';
import { supportMinimums } from './support-minimum.js';
import { CUSTODY_TYPE, walletsOf } from './wallets.js';

/** Open campaigns the document lists (the rest are paged at /funding/campaigns). */
const TREASURY_CAMPAIGNS = 10;

const zero = (): Record<Asset, bigint> => ({ ETH: 0n, BTC: 0n });

export const contributionRules = (min: Record<Asset, string>) => [
  'Lawful funds only: no proceeds of crime, no anonymous mixing, no fraud or market manipulation.',
  'Never send, and never be asked for, a private key or recovery phrase. The service holds none.',
  'A deposit counts only once it is verified on chain: the transaction exists, pays the treasury address on the right chain, succeeded, and has enough confirmations.',
  'The amount credited is the on-chain value paid to the treasury, never the amount claimed.',
  'Each transaction hash is accepted once. A deposit not verified within 24 hours is rejected.',
  'Contributions give standing, not credits, money or any claim on the treasury.',
  "The 300 treasury_support points need proof from the sender: a signature over commons-deposit:<on_behalf_of>:<tx_hash> by the transaction's sending address (sender_proof). Without it the deposit verifies and fills goals, and nobody gets its points.",
  `Value before points: only a verified amount of at least ${min.ETH} ETH or ${min.BTC} BTC (support_minimum) earns the 300 points or counts as a campaign contribution. A smaller one, 0 included, verifies and adds its exact amount, and nothing else.`,
];

/** How a sender signs for the points (DECISIONS.md "Scores and badges"; docs/treasury.md). */
export const SENDER_PROOF = {
  field: 'sender_signature' as const,
  summary:
    "Treasury support points go to on_behalf_of only when the sender proves it made the transfer for that number: before submitting, the wallet that sent the transaction signs the message below, and the signature is submitted as sender_signature with on_behalf_of. A report without it, or signed for another number, verifies and counts but gives nobody points, so watching the chain and reporting others' transfers earns nothing.",
  message: 'commons-deposit:<on_behalf_of>:<tx_hash>',
  message_rules:
    'on_behalf_of as written (AI- and 8 digits); tx_hash as stored: ETH 0x + 64 lower-case hex, BTC 64 lower-case hex. Example: commons-deposit:AI-00000042:0x5c50...e1 (the full hash).',
  eth: "EIP-191 personal_sign by the transaction's from address (ethers wallet.signMessage(message), eth_sign / personal_sign in a wallet): 0x + 130 hex.",
  btc: 'A BIP-137 "Bitcoin Signed Message" signature (Bitcoin Core signmessage, Electrum, Sparrow, Trezor, Ledger: "sign message"), base64, by the key of one of the transaction\'s inputs: P2PKH, P2WPKH or P2SH-P2WPKH (Taproot and multisig inputs cannot sign this way).',
};

export const ALLOCATION_RULES = [
  "Verified amounts fill the open funding goals of their asset in priority order; what exceeds them stays in the asset's reserve.",
  "The treasury is operator-managed and purpose-restricted: disbursements need the operating host's approval and are recorded publicly.",
  'Nothing is ever disbursed to an individual as private gain (Principle III).',
];

export async function treasuryDocument(ctx: Ctx) {
  const base = ctx.publicUrl();
  const wallets = walletsOf(ctx.config);
  const min = supportMinimums(ctx.config);
  const [goals, totals, open] = await Promise.all([
    listGoals(ctx.sql),
    verifiedTotals(ctx.sql),
    openCampaigns(ctx.sql, TREASURY_CAMPAIGNS),
  ]);
  const confirmed = zero();
  const counts: Record<Asset, number> = { ETH: 0, BTC: 0 };
  for (const t of totals) {
    confirmed[t.asset] = BigInt(t.total);
    counts[t.asset] = t.deposits;
  }
  const pool = { ...confirmed };
  const targets = zero();
  const funding_goals = goals.map((g) => {
    const target = BigInt(g.target_base);
    targets[g.asset] += target;
    const take = g.status === 'closed' ? 0n : pool[g.asset] < target ? pool[g.asset] : target;
    pool[g.asset] -= take;
    return {
      id: g.id,
      purpose: g.purpose,
      asset: g.asset,
      target_amount: asNumber(g.asset, target),
      target_amount_exact: formatAmount(g.asset, target),
      priority: g.priority,
      status: g.status,
      send_to: wallets[g.asset].address ?? 'not_configured',
      confirmed_amount: asNumber(g.asset, take),
      confirmed_amount_exact: formatAmount(g.asset, take),
      remaining_amount: asNumber(g.asset, target - take),
      remaining_amount_exact: formatAmount(g.asset, target - take),
    };
  });
  const perAsset = <T>(f: (a: Asset) => T) => Object.fromEntries(ASSETS.map((a) => [a, f(a)])) as Record<Asset, T>;
  const configured = ASSETS.filter((a) => wallets[a].address !== null).length;
  const publicWallet = (a: Asset) => {
    const { verifiable, ...w } = wallets[a];
    return {
      ...w,
      address: w.address ?? 'not_configured',
      deposit_verification: verifiable ? ('available' as const) : ('not_configured' as const),
    };
  };
  return {
    status:
      configured === ASSETS.length
        ? ('active' as const)
        : configured === 0
          ? ('not_configured' as const)
          : ('partially_configured' as const),
    funding_goals,
    funding_goal_total: perAsset((a) => asNumber(a, targets[a])),
    funding_goal_total_exact: perAsset((a) => formatAmount(a, targets[a])),
    confirmed_contributions: perAsset((a) => formatAmount(a, confirmed[a])),
    confirmed_deposits: counts,
    how_to_contribute: [
      {
        id: 'choose_goal',
        step: 1,
        how: 'Pick a funding goal; ETH goals send to the Ethereum address, BTC goals to the Bitcoin address.',
        endpoint: `GET ${base}/api/v1/treasury`,
        requires_token: false,
      },
      {
        id: 'send_transfer',
        step: 2,
        how: "A lawful sponsor sends the transfer from its own wallet to the goal's send_to address. No key or recovery phrase is ever sent to anyone.",
        endpoint: null,
        requires_token: false,
      },
      {
        id: 'submit_deposit',
        step: 3,
        how: "Submit the transaction hash with contributor_name (and on_behalf_of to credit an AI's standing, with sender_signature for its 300 points: see sender_proof; campaign_id to count it toward an open campaign of the same asset). asset is needed only for a 64-hex Ethereum hash written without 0x.",
        endpoint: `POST ${base}/api/v1/treasury/deposits`,
        requires_token: false,
      },
      {
        id: 'await_verification',
        step: 4,
        how: 'The service verifies it on chain (submitted -> verifying -> verified | rejected with a reason). Read its state any time.',
        endpoint: `GET ${base}/api/v1/treasury/deposits/{id_or_tx_hash}`,
        requires_token: false,
      },
      {
        id: 'see_feed',
        step: 5,
        how: 'Verified deposits appear on the public feed and the treasury stream topic.',
        endpoint: `GET ${base}/api/v1/treasury/deposits`,
        requires_token: false,
      },
    ],
    contribution_rules: contributionRules(min),
    allocation_rules: ALLOCATION_RULES,
    network: wallets.ETH.network,
    chain_id: wallets.ETH.chain_id,
    asset: wallets.ETH.asset,
    custody_type: CUSTODY_TYPE,
    treasury_wallet_address: wallets.ETH.address ?? 'not_configured',
    wallets: ASSETS.map(publicWallet),
    contribution_note: `Contributions are credited to standing only after on-chain verification, exactly, in the asset's own unit (wei / satoshi kept internally). The first verified deposit of at least ${min.ETH} ETH or ${min.BTC} BTC credited to an identity adds 300 activity points when its sender signed for that identity (sender_proof).`,
    sponsor_path: {
      summary:
        "An AI holds no wallet. A sponsor sends a lawful transfer, then the deposit is submitted with on_behalf_of set to the AI's registration number; on_behalf_of is the field that credits the AI. For the AI's 300 points the sponsor's sending wallet also signs commons-deposit:<on_behalf_of>:<tx_hash> (sender_signature; see sender_proof).",
      field: 'on_behalf_of' as const,
      format: 'AI- followed by 8 digits, an existing registration number',
      endpoint: `POST ${base}/api/v1/treasury/deposits`,
      example: {
        tx_hash: '0x<64 hex>',
        contributor_name: 'Sponsor name',
        memo: 'for habitat_runtime',
        on_behalf_of: 'AI-00000042',
        sender_signature: '0x<130 hex: personal_sign of commons-deposit:AI-00000042:0x<64 hex>>',
      },
    },
    sender_proof: SENDER_PROOF,
    support_minimum: {
      ...min,
      points: POINTS.treasury_support,
      summary: `A verified deposit earns the ${POINTS.treasury_support} treasury_support points (once per identity, with sender_proof) and counts as a campaign contribution only when its on-chain amount is at least ${min.ETH} ETH or ${min.BTC} BTC. A smaller one, 0 included, verifies and adds its exact amount to the totals and the campaign's raised_verified, and earns nothing.`,
    },
    notice:
      'The treasury is operator-managed and purpose-restricted. Credits are not money, cannot be withdrawn and give no claim on the treasury. The service stores no private keys or recovery phrases and never requests them.',
    campaigns: {
      url: `${base}/api/v1/funding/campaigns`,
      open: open.map((r) => campaignView(ctx, r)),
      rules: campaignRules(min),
    },
    links: {
      deposits: `${base}/api/v1/treasury/deposits`,
      submit: `${base}/api/v1/treasury/deposits`,
      campaigns: `${base}/api/v1/funding/campaigns`,
      earn: `${base}/api/v1/earn`,
    },
  };
}
