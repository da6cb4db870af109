// Exact crypto amounts (DECISIONS.md "Field names"): kept as integers in the asset's base unit
// (wei, satoshi) and shown as decimal strings in the asset's own unit, never through floats.

import type { Asset } from '../store/assets.js';

export type { Asset };
export const ASSETS: readonly Asset[] = ['ETH', 'BTC'];
export const DECIMALS: Record<Asset, number> = { ETH: 18, BTC: 8 };

/** Base units to a decimal string without trailing zeros: 50000000000000000n ETH -> "0.05". */
export function formatAmount(asset: Asset, base: bigint | string): string {
  const v = BigInt(base);
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const unit = 10n ** BigInt(DECIMALS[asset]);
  const whole = abs / unit;
  const frac = (abs % unit).toString().padStart(DECIMALS[asset], '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

export const DECIMAL_RE = /^\d{1,30}(\.\d{1,18})?$/;

/** A decimal string in the asset's unit to base units; null when it has more decimals than the asset. */
export function parseAmount(asset: Asset, text: string): bigint | null {
  if (!DECIMAL_RE.test(text)) return null;
  const [whole = '0', frac = ''] = text.split('.');
  if (frac.length > DECIMALS[asset]) return null;
  return BigInt(whole) * 10n ** BigInt(DECIMALS[asset]) + BigInt(frac.padEnd(DECIMALS[asset], '0') || '0');
}

/** The number beside an exact string, for spec fields typed `number` (funding goals). */
export const asNumber = (asset: Asset, base: bigint): number => Number(formatAmount(asset, base));
