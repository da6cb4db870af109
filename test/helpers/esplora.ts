// An Esplora-protocol stand-in for Bitcoin deposit tests. No bitcoind can be had on this machine,
// so this small HTTP server implements the three Esplora calls the verifier makes
// (GET /tx/:txid, GET /tx/:txid/status, GET /blocks/tip/height) in Esplora's JSON shape, over a
// tiny regtest chain of real transactions built and signed with bitcoinjs-lib + ecpair +
// tiny-secp256k1. txids, outputs and addresses are computed by bitcoinjs from the signed bytes.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as bitcoin from 'bitcoinjs-lib';
import { ECPairFactory, type ECPairInterface } from 'ecpair';
import * as ecc from 'tiny-secp256k1';

const ECPair = ECPairFactory(ecc);
export const network = bitcoin.networks.regtest;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

export interface Key {
  pair: ECPairInterface;
  kind: 'p2wpkh' | 'p2pkh';
  address: string;
  script: Uint8Array;
}

export function newKey(kind: Key['kind'] = 'p2wpkh'): Key {
  const pair = ECPair.makeRandom({ network });
  const pay = bitcoin.payments[kind]({ pubkey: pair.publicKey, network });
  return { pair, kind, address: pay.address as string, script: pay.output as Uint8Array };
}

/**
 * A BIP-137 message signature by `key`, as a wallet's "sign message" makes it: tiny-secp256k1's
 * recoverable signature over sha256d(varint(24) "Bitcoin Signed Message:\n" varint(len) message)
 * (bitcoinjs-lib's hash256), with the header of the key's address type (31 + recovery id for
 * P2PKH with a compressed key, 39 + recovery id for P2WPKH).
 */
export function bip137Sign(key: Key, message: string): string {
  const m = Buffer.from(message, 'utf8');
  if (m.length >= 0xfd) throw new Error('short messages only');
  const digest = bitcoin.crypto.hash256(Buffer.concat([Buffer.from('\x18Bitcoin Signed Message:\n'), Buffer.from([m.length]), m]));
  const priv = key.pair.privateKey;
  if (!priv) throw new Error('no private key');
  const { signature, recoveryId } = ecc.signRecoverable(digest, priv);
  const header = (key.kind === 'p2pkh' ? 31 : 39) + recoveryId;
  return Buffer.concat([Buffer.from([header]), Buffer.from(signature)]).toString('base64');
}

export interface Utxo {
  txid: string;
  vout: number;
  value: bigint;
  key: Key;
}

interface Entry {
  tx: bitcoin.Transaction;
  height: number | null;
}

export class EsploraStandIn {
  private txs = new Map<string, Entry>();
  private blockHashes: string[] = [hex(randomBytes(32))];
  private server: Server | null = null;
  url = '';

  get tip(): number {
    return this.blockHashes.length - 1;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.handle(req.url ?? '/', res));
    await new Promise<void>((ok) => this.server?.listen(0, '127.0.0.1', ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    await new Promise<void>((ok) => this.server?.close(() => ok()));
  }

  /** A coinbase-style transaction paying `value` to a fresh key, mined at once. */
  fund(value: bigint, kind: Key['kind'] = 'p2wpkh'): Utxo {
    const key = newKey(kind);
    const tx = new bitcoin.Transaction();
    tx.version = 2;
    tx.addInput(new Uint8Array(32), 0xffffffff, 0xffffffff, Uint8Array.from(randomBytes(8)));
    tx.addOutput(key.script, value);
    this.txs.set(tx.getId(), { tx, height: null });
    this.mine(1);
    return { txid: tx.getId(), vout: 0, value, key };
  }

  /** Builds, signs (P2WPKH) and broadcasts a payment; the change (minus fee) goes back to the payer. */
  pay(from: Utxo, outputs: { address: string; value: bigint }[], fee = 500n): string {
    const psbt = new bitcoin.Psbt({ network });
    if (from.key.kind === 'p2pkh') {
      const prev = this.txs.get(from.txid)?.tx;
      if (!prev) throw new Error('unknown coin');
      psbt.addInput({ hash: from.txid, index: from.vout, nonWitnessUtxo: prev.toBuffer() });
    } else psbt.addInput({ hash: from.txid, index: from.vout, witnessUtxo: { script: from.key.script, value: from.value } });
    let spent = 0n;
    for (const o of outputs) {
      psbt.addOutput({ address: o.address, value: o.value });
      spent += o.value;
    }
    const change = from.value - spent - fee;
    if (change < 0n) throw new Error('insufficient funds');
    if (change > 0n) psbt.addOutput({ address: from.key.address, value: change });
    psbt.signInput(0, from.key.pair);
    psbt.finalizeAllInputs();
    const tx = psbt.extractTransaction();
    this.txs.set(tx.getId(), { tx, height: null });
    return tx.getId();
  }

  /** Mines the mempool into the next block, then `n - 1` empty blocks. */
  mine(n = 1): void {
    for (let i = 0; i < n; i++) {
      const height = this.blockHashes.length;
      this.blockHashes.push(hex(createHash('sha256').update(randomBytes(32)).digest()));
      if (i === 0) for (const e of this.txs.values()) if (e.height === null) e.height = height;
    }
  }

  private status(e: Entry) {
    if (e.height === null) return { confirmed: false };
    return { confirmed: true, block_height: e.height, block_hash: this.blockHashes[e.height], block_time: 1_700_000_000 + e.height * 600 };
  }

  private output(script: Uint8Array, value: bigint) {
    let address: string | undefined;
    try {
      address = bitcoin.address.fromOutputScript(script, network);
    } catch {
      address = undefined;
    }
    const p2pkh = script.length === 25 && script[0] === 0x76 && script[1] === 0xa9 && script[2] === 20;
    const type = script.length === 22 && script[0] === 0 && script[1] === 20 ? 'v0_p2wpkh' : p2pkh ? 'p2pkh' : 'unknown';
    return {
      scriptpubkey: hex(script),
      scriptpubkey_asm: bitcoin.script.toASM(script),
      scriptpubkey_type: type,
      ...(address ? { scriptpubkey_address: address } : {}),
      value: Number(value),
    };
  }

  private txJson(e: Entry) {
    const { tx } = e;
    let inValue = 0n;
    const vin = tx.ins.map((i) => {
      const prevTxid = hex(Uint8Array.from(i.hash).reverse());
      const prev = this.txs.get(prevTxid)?.tx.outs[i.index];
      if (prev) inValue += prev.value;
      const coinbase = i.index === 0xffffffff;
      return {
        txid: prevTxid,
        vout: i.index,
        prevout: prev && !coinbase ? this.output(prev.script, prev.value) : null,
        scriptsig: hex(i.script),
        scriptsig_asm: bitcoin.script.toASM(i.script),
        witness: i.witness.map(hex),
        is_coinbase: coinbase,
        sequence: i.sequence,
      };
    });
    const outValue = tx.outs.reduce((s, o) => s + o.value, 0n);
    return {
      txid: tx.getId(),
      version: tx.version,
      locktime: tx.locktime,
      vin,
      vout: tx.outs.map((o) => this.output(o.script, o.value)),
      size: tx.byteLength(),
      weight: tx.weight(),
      fee: vin[0]?.is_coinbase ? 0 : Number(inValue - outValue),
      status: this.status(e),
    };
  }

  private handle(url: string, res: import('node:http').ServerResponse): void {
    const [status, body, type] = this.answer(url);
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  }

  private answer(url: string): [number, string, string] {
    if (url === '/blocks/tip/height') return [200, String(this.tip), 'text/plain'];
    const m = /^\/tx\/([0-9a-f]{64})(\/status)?$/.exec(url);
    if (m) {
      const e = this.txs.get(m[1] as string);
      if (!e) return [404, 'Transaction not found', 'text/plain'];
      return [200, JSON.stringify(m[2] ? this.status(e) : this.txJson(e)), 'application/json'];
    }
    if (/^\/tx\//.test(url)) return [400, 'Invalid hex string', 'text/plain'];
    return [404, 'Not Found', 'text/plain'];
  }
}
