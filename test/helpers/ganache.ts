// A real local Ethereum chain for deposit tests: ganache 7.9.2 in-process on 127.0.0.1:0, with
// funded accounts whose keys exist only in the test (the service never holds one).
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { JsonRpcProvider, parseEther, type TransactionResponse, Wallet } from 'ethers';
import ganache from 'ganache';

export const CHAIN_ID = 1337;

// A stand-in for a multisig treasury (like a Safe): a contract that accepts plain ETH transfers
// and reverts any call that carries data, so a failed transaction to the treasury can be made.
// Runtime: CALLDATASIZE ISZERO PUSH1 0x0a JUMPI PUSH1 0 PUSH1 0 REVERT JUMPDEST STOP
const RUNTIME = '3615600a5760006000fd5b00';
const INIT = `0x600c600c600039600c6000f3${RUNTIME}`;

export interface Chain {
  url: string;
  provider: JsonRpcProvider;
  sender: Wallet;
  mine(blocks?: number): Promise<void>;
  deployTreasury(): Promise<string>;
  send(to: string, eth: string | bigint, extra?: { data?: string; gasLimit?: number }): Promise<TransactionResponse>;
  stopMining(): Promise<void>;
  startMining(): Promise<void>;
  close(): Promise<void>;
}

export async function startChain(): Promise<Chain> {
  const key = `0x${randomBytes(32).toString('hex')}`;
  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId: CHAIN_ID },
    wallet: { accounts: [{ secretKey: key, balance: `0x${parseEther('1000').toString(16)}` }] },
  });
  await server.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new JsonRpcProvider(url, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
  const sender = new Wallet(key, provider);
  return {
    url,
    provider,
    sender,
    async mine(blocks = 1) {
      await provider.send('evm_mine', [{ blocks }]);
    },
    async deployTreasury() {
      const tx = await sender.sendTransaction({ data: INIT });
      const receipt = await tx.wait();
      if (!receipt?.contractAddress) throw new Error('treasury contract not deployed');
      return receipt.contractAddress;
    },
    send(to, eth, extra = {}) {
      return sender.sendTransaction({ to, value: typeof eth === 'bigint' ? eth : parseEther(eth), ...extra });
    },
    async stopMining() {
      await provider.send('miner_stop', []);
    },
    async startMining() {
      await provider.send('miner_start', []);
    },
    async close() {
      provider.destroy();
      await server.close();
    },
  };
}

/**
 * The proof a sender gives for its deposit's points (docs/treasury.md "Proof from the sender"):
 * EIP-191 personal_sign, by `wallet`, of `commons-deposit:<number>:<tx hash in lower case>`.
 */
export function signDeposit(wallet: Pick<Wallet, 'signMessage'>, number: string, txHash: string): Promise<string> {
  return wallet.signMessage(`commons-deposit:${number}:${txHash.toLowerCase()}`);
}
