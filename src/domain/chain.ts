// What the deposit verifier needs from a chain (DECISIONS.md "Treasury and deposits"): one
// question per transaction. Implementations (ethers JSON-RPC, Esplora REST) live in
// src/transport/chain; a fault of the peer (down, timeout, garbage) is thrown, never answered.

export type ChainCheck =
  /** The peer does not know the transaction (yet). */
  | { kind: 'not_found' }
  /** Known, to the treasury, but not (yet) confirmed enough. */
  | { kind: 'pending'; confirmations: number; blockNumber: number | null }
  /** Final and good: the amount is the on-chain value to the treasury. */
  | { kind: 'confirmed'; amountBase: bigint; confirmations: number; blockNumber: number }
  /** Known and definitely not a contribution to the treasury. */
  | { kind: 'refused'; reason: 'WRONG_RECIPIENT' | 'WRONG_CHAIN' | 'FAILED_TX' };

export interface ChainChecker {
  check(txHash: string): Promise<ChainCheck>;
  close(): void;
}
