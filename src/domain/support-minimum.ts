// Value before points (DECISIONS.md "Scores and badges"): a verified deposit earns the 300
// treasury_support points, and counts among a campaign's contributions, only when its on-chain
// amount is at least TREASURY_SUPPORT_MIN_ETH / TREASURY_SUPPORT_MIN_BTC. A smaller one (0 wei
// included) verifies and adds its exact amount, and nothing else: a transfer that costs only gas
// must not buy rank.
import type { Config } from '../config.js';
import { ASSETS, type Asset, formatAmount, parseAmount } from './amounts.js';

/** The least amount that counts, in base units (wei / satoshi). */
export function supportMinimum(config: Pick<Config, 'treasury'>, asset: Asset): bigint {
  // config.ts checked the text has at most the asset's decimals, so it parses.
  return parseAmount(asset, config.treasury.supportMin[asset]) ?? 0n;
}

/** Whether a verified amount is large enough to earn points and count as a contribution. */
export const countsAsSupport = (config: Pick<Config, 'treasury'>, asset: Asset, amountBase: bigint | string): boolean =>
  BigInt(amountBase) >= supportMinimum(config, asset);

/** The minimum per asset as the documents show it (exact decimal strings in the asset's unit). */
export const supportMinimums = (config: Pick<Config, 'treasury'>): Record<Asset, string> =>
  Object.fromEntries(ASSETS.map((a) => [a, formatAmount(a, supportMinimum(config, a))])) as Record<Asset, string>;
