// Bitcoin deposit checks against an Esplora-compatible REST API at BTC_ESPLORA_URL (DECISIONS.md
// "Treasury and deposits"): the amount is the sum of the outputs paying the treasury address;
// confirmations = tip height - block height + 1 >= BTC_MIN_CONFIRMATIONS.
import { z } from 'zod';
import type { ChainCheck, ChainChecker, SenderProof } from '../../domain/chain.js';
import { signerScripts } from './bip137.js';

export interface BtcOptions {
  esploraUrl: string;
  minConfirmations: number;
  treasury: string;
  timeoutMs?: number;
}

// The parts of Esplora's GET /tx/:txid answer we rely on; anything else shaped is refused.
const EsploraTx = z.object({
  txid: z.string(),
  vout: z.array(z.object({ scriptpubkey_address: z.string().optional(), value: z.number().int().nonnegative() })),
  // The spent outputs' scripts, for the sender's proof; a server that leaves them out proves nothing.
  vin: z.array(z.object({ prevout: z.object({ scriptpubkey: z.string() }).nullable().optional() })).default([]),
  status: z.object({ confirmed: z.boolean(), block_height: z.number().int().nonnegative().optional() }),
});

// Bech32 addresses are case-insensitive; base58 ones are not.
const addressKey = (a: string): string => (/^(bc|tb|bcrt)1/i.test(a) ? a.toLowerCase() : a);

export function btcChecker(o: BtcOptions): ChainChecker {
  const base = o.esploraUrl.replace(/\/+$/, '');
  const treasury = addressKey(o.treasury);
  const get = (path: string) => fetch(base + path, { signal: AbortSignal.timeout(o.timeoutMs ?? 10_000) });

  return {
    async check(txid: string, proof?: SenderProof): Promise<ChainCheck> {
      const res = await get(`/tx/${txid}`);
      if (res.status === 404) {
        await res.body?.cancel();
        return { kind: 'not_found' };
      }
      if (!res.ok) throw new Error(`esplora answered ${res.status}`);
      const tx = EsploraTx.parse(await res.json());
      if (tx.txid.toLowerCase() !== txid) throw new Error('esplora answered with another transaction');
      // An output to the treasury makes it a deposit, whatever its value: a 0-sat one verifies with
      // amount 0, as a 0-wei transfer does, and earns nothing (src/domain/support-minimum.ts).
      let total = 0n;
      let paid = false;
      for (const out of tx.vout) {
        if (out.scriptpubkey_address && addressKey(out.scriptpubkey_address) === treasury) {
          total += BigInt(out.value);
          paid = true;
        }
      }
      if (!paid) return { kind: 'refused', reason: 'WRONG_RECIPIENT' };
      const height = tx.status.block_height;
      if (!tx.status.confirmed || height === undefined) return { kind: 'pending', confirmations: 0, blockNumber: null };
      const tipRes = await get('/blocks/tip/height');
      const tipText = (await tipRes.text()).trim();
      if (!tipRes.ok || !/^\d{1,10}$/.test(tipText)) throw new Error('esplora answered a bad tip height');
      const confirmations = Math.max(0, Number(tipText) - height + 1);
      if (confirmations < o.minConfirmations) return { kind: 'pending', confirmations, blockNumber: height };
      const confirmed = { kind: 'confirmed' as const, amountBase: total, confirmations, blockNumber: height };
      if (!proof) return confirmed;
      // BIP-137: the key that signed pays to one of the scripts this transaction spends.
      const signers = new Set(signerScripts(proof.message, proof.signature));
      return { ...confirmed, senderSigned: tx.vin.some((i) => i.prevout && signers.has(i.prevout.scriptpubkey.toLowerCase())) };
    },
    close() {},
  };
}
