// What the deposit verifier needs from a chain (DECISIONS.md "Treasury and deposits"): one
// question per transaction. Implementations (ethers JSON-RPC, Esplora REST) live in
// src/transport/chain; a fault of the peer (down, timeout, garbage) is thrown, never answered.

export type ChainCheck =
  /** The peer does not know the transaction (yet). */
  | { kind: 'not_found' }
  /** Known, to the treasury, but not (yet) confirmed enough. */
  | { kind: 'pending'; confirmations: number; blockNumber: number | null }
  /** Final and good: the amount is the on-chain value to the treasury. `senderSigned` answers the
   * proof asked for (absent when none was): did the transaction's sender sign its message? */
  | { kind: 'confirmed'; amountBase: bigint; confirmations: number; blockNumber: number; senderSigned?: boolean }
  /** Known and definitely not a contribution to the treasury. */
  | { kind: 'refused'; reason: 'WRONG_RECIPIENT' | 'WRONG_CHAIN' | 'FAILED_TX' };

/** A proof from the sender to check (docs/treasury.md "Proof from the sender"): `signature` over
 * `message` by the transaction's sending address (ETH) or one of its inputs' keys (BTC). */
export interface SenderProof {
  message: string;
  signature: string;
}

export interface ChainChecker {
  check(txHash: string, proof?: SenderProof): Promise<ChainCheck>;
  close(): void;
}
