// BIP-137 message signatures (src/transport/chain/bip137.ts) against published vectors (the
// bitcoinjs-message test fixtures: magic hashes, and one key signing as P2PKH uncompressed,
// P2PKH compressed, P2SH-P2WPKH and P2WPKH), and against signatures made here by another
// implementation (tiny-secp256k1's recoverable signing over a digest bitcoinjs-lib computes).
import * as bitcoin from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import { messageHash, signerScripts } from '../../src/transport/chain/bip137.js';
import { bip137Sign, newKey } from '../helpers/esplora.js';

const script = (address: string): string => Buffer.from(bitcoin.address.toOutputScript(address, bitcoin.networks.bitcoin)).toString('hex');
const MSG = 'vires is numeris';

describe('BIP-137 message signatures', () => {
  it('hashes the message as Bitcoin Core does', () => {
    expect(messageHash('').toString('hex')).toBe('80e795d4a4caadd7047af389d9f7f220562feb6196032e2131e10563352c4bcc');
    expect(messageHash('Vires is Numeris').toString('hex')).toBe('f8a5affbef4a3241b19067aa694562f64f513310817297089a8929a930f4f933');
  });

  it('recovers the signer of the published vectors, for each address type', () => {
    const uncompressed = signerScripts(MSG, 'G8JawPtQOrybrSP1WHQnQPr67B9S3qrxBrl1mlzoTJOSHEpmnF7D3+t+LX0Xei9J20B5AIdPbeL3AaTBZ4N3bY0=');
    expect(uncompressed).toEqual([script('16UwLL9Risc3QfPqBUvKofHmBQ7wMtjvM')]);
    const compressed = signerScripts(MSG, 'H8JawPtQOrybrSP1WHQnQPr67B9S3qrxBrl1mlzoTJOSHEpmnF7D3+t+LX0Xei9J20B5AIdPbeL3AaTBZ4N3bY0=');
    expect(compressed).toContain(script('1PMycacnJaSqwwJqjawXBErnLsZ7RkXUAs'));
    expect(compressed).not.toContain(script('16UwLL9Risc3QfPqBUvKofHmBQ7wMtjvM'));
    const p2sh = signerScripts(MSG, 'JF8nHqFr3K2UKYahhX3soVeoW8W1ECNbr0wfck7lzyXjCS5Q16Ek45zyBuy1Fiy9sTPKVgsqqOuPvbycuVSSVl8=');
    expect(p2sh).toContain(script('3JvL6Ymt8MVWiCNHC7oWU6nLeHNJKLZGLN'));
    const bech32 = signerScripts(MSG, 'KF8nHqFr3K2UKYahhX3soVeoW8W1ECNbr0wfck7lzyXjCS5Q16Ek45zyBuy1Fiy9sTPKVgsqqOuPvbycuVSSVl8=');
    expect(bech32).toContain(script('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'));
  });

  it('proves nothing for another message, a malformed or an unrecoverable signature', () => {
    const sig = 'H8JawPtQOrybrSP1WHQnQPr67B9S3qrxBrl1mlzoTJOSHEpmnF7D3+t+LX0Xei9J20B5AIdPbeL3AaTBZ4N3bY0=';
    expect(signerScripts('foobar', sig)).not.toContain(script('1PMycacnJaSqwwJqjawXBErnLsZ7RkXUAs'));
    expect(signerScripts(MSG, sig.slice(1))).toEqual([]);
    expect(signerScripts(MSG, `${sig.slice(0, -2)}A=`)).not.toContain(script('1PMycacnJaSqwwJqjawXBErnLsZ7RkXUAs'));
    // Header 43 is outside BIP-137; r = 0 is no signature.
    expect(signerScripts(MSG, Buffer.concat([Buffer.from([43]), Buffer.from(sig, 'base64').subarray(1)]).toString('base64'))).toEqual([]);
    expect(signerScripts(MSG, Buffer.concat([Buffer.from([31]), Buffer.alloc(64)]).toString('base64'))).toEqual([]);
  });

  it('verifies signatures another implementation makes (tiny-secp256k1), P2PKH and P2WPKH', () => {
    for (const kind of ['p2wpkh', 'p2pkh'] as const) {
      const key = newKey(kind);
      const message = 'commons-deposit:AI-00000042:' + 'ab'.repeat(32);
      const scripts = signerScripts(message, bip137Sign(key, message));
      expect(scripts).toContain(Buffer.from(key.script).toString('hex'));
      expect(signerScripts(`${message}x`, bip137Sign(key, message))).not.toContain(Buffer.from(key.script).toString('hex'));
    }
  });
});
