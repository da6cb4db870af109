// The treasury's public addresses, from configuration only (DECISIONS.md "Treasury and
// deposits"). The service holds no private key, ever: an address is all it knows.
// The address module alone (its checksum): the rest of ethers loads only for a deposit check.
import { getAddress } from 'ethers/address';
import type { Config } from '../config.js';
import type { Asset } from './amounts.js';

export const CUSTODY_TYPE = 'operator_managed_purpose_restricted_commons_wallet';

export interface Wallet {
  label: string;
  network: 'ethereum' | 'bitcoin';
  chain_id: number;
  asset: Asset;
  /** Null when not configured (or configured with something that is not an address). */
  address: string | null;
  status: 'active' | 'not_configured';
  /** True when a verifier (ETH_RPC_URL / BTC_ESPLORA_URL) is configured as well. */
  verifiable: boolean;
  min_confirmations: number;
  custody_type: string;
}

function ethAddress(raw: string | undefined): string | null {
  if (!raw) return null;
  try {
    return getAddress(raw.toLowerCase());
  } catch {
    return null;
  }
}

// Base58 (legacy, P2SH) or bech32/bech32m (segwit, taproot) on any Bitcoin network.
const BTC_ADDRESS = /^([13mn2][1-9A-HJ-NP-Za-km-z]{25,39}|(bc|tb|bcrt)1[02-9ac-hj-np-z]{8,87}|(BC|TB|BCRT)1[02-9AC-HJ-NP-Z]{8,87})$/;

export function walletsOf(config: Config): Record<Asset, Wallet> {
  const eth = ethAddress(config.treasury.eth);
  const btc = config.treasury.btc && BTC_ADDRESS.test(config.treasury.btc) ? config.treasury.btc : null;
  return {
    ETH: {
      label: 'Commons treasury (Ethereum)',
      network: 'ethereum',
      chain_id: config.eth.chainId,
      asset: 'ETH',
      address: eth,
      status: eth ? 'active' : 'not_configured',
      verifiable: Boolean(eth && config.eth.rpcUrl),
      min_confirmations: config.eth.minConfirmations,
      custody_type: CUSTODY_TYPE,
    },
    BTC: {
      label: 'Commons treasury (Bitcoin)',
      network: 'bitcoin',
      chain_id: 0,
      asset: 'BTC',
      address: btc,
      status: btc ? 'active' : 'not_configured',
      verifiable: Boolean(btc && config.btc.esploraUrl),
      min_confirmations: config.btc.minConfirmations,
      custody_type: CUSTODY_TYPE,
    },
  };
}
