// Ethereum deposit checks with ethers v6 against ETH_RPC_URL (DECISIONS.md "Treasury and
// deposits"): the transaction exists, its chain is ETH_CHAIN_ID, `to` is the treasury, the receipt
// status is 1, and it has ETH_MIN_CONFIRMATIONS. The amount is the transaction's value.
// ethers (most of its weight is the provider) is imported on the first check: a node without a
// configured verifier, or one that has not checked yet, does not hold it (issue 47).
import type { JsonRpcProvider } from 'ethers';
import type { ChainCheck, ChainChecker, SenderProof } from '../../domain/chain.js';

export interface EthOptions {
  rpcUrl: string;
  chainId: number;
  minConfirmations: number;
  treasury: string;
  timeoutMs?: number;
}

export function ethChecker(o: EthOptions): ChainChecker {
  let loaded: Promise<{ provider: JsonRpcProvider; verifyMessage: typeof import('ethers').verifyMessage }> | null = null;
  let closed = false;
  const load = () =>
    (loaded ??= import('ethers').then(({ FetchRequest, JsonRpcProvider, verifyMessage }) => {
      const req = new FetchRequest(o.rpcUrl);
      req.timeout = o.timeoutMs ?? 10_000;
      // A fixed network (no detection loop while the RPC is down) and no response cache, so block
      // numbers and confirmations are fresh on every check.
      const provider = new JsonRpcProvider(req, o.chainId, { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1 });
      if (closed) provider.destroy();
      return { provider, verifyMessage };
    }));
  const treasury = o.treasury.toLowerCase();
  const wanted = BigInt(o.chainId);

  return {
    async check(hash: string, proof?: SenderProof): Promise<ChainCheck> {
      const { provider, verifyMessage } = await load();
      const tx = await provider.getTransaction(hash);
      if (!tx) return { kind: 'not_found' };
      if (tx.hash.toLowerCase() !== hash) throw new Error('the RPC answered with another transaction');
      // The transaction's own EIP-155 chain id, and the chain the RPC serves it from.
      const served = BigInt(await provider.send('eth_chainId', []));
      if ((tx.chainId !== 0n && tx.chainId !== wanted) || served !== wanted) return { kind: 'refused', reason: 'WRONG_CHAIN' };
      if (!tx.to || tx.to.toLowerCase() !== treasury) return { kind: 'refused', reason: 'WRONG_RECIPIENT' };
      const receipt = await provider.getTransactionReceipt(hash);
      if (!receipt) return { kind: 'pending', confirmations: 0, blockNumber: null };
      if (receipt.hash.toLowerCase() !== hash) throw new Error('the RPC answered with another receipt');
      if (receipt.status !== 1) return { kind: 'refused', reason: 'FAILED_TX' };
      const tip = await provider.getBlockNumber();
      const confirmations = Math.max(0, tip - receipt.blockNumber + 1);
      if (confirmations < o.minConfirmations) return { kind: 'pending', confirmations, blockNumber: receipt.blockNumber };
      if (tx.value < 0n) throw new Error('negative value');
      const confirmed = { kind: 'confirmed' as const, amountBase: tx.value, confirmations, blockNumber: receipt.blockNumber };
      return proof ? { ...confirmed, senderSigned: signedBy(verifyMessage, proof, tx.from) } : confirmed;
    },
    close() {
      closed = true;
      void loaded?.then(({ provider }) => provider.destroy());
    },
  };
}

/** EIP-191 personal_sign: the address that signed `message` is the transaction's `from`. */
function signedBy(verifyMessage: typeof import('ethers').verifyMessage, proof: SenderProof, from: string): boolean {
  try {
    return verifyMessage(proof.message, proof.signature).toLowerCase() === from.toLowerCase();
  } catch {
    return false; // not a signature ethers can recover an address from
  }
}
