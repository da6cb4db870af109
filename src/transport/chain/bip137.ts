// Bitcoin message signatures (BIP-137, the "Bitcoin Signed Message" form of Bitcoin Core's
// signmessage, Electrum, Trezor, Ledger, Sparrow), for a deposit's proof from its sender
// (docs/treasury.md "Proof from the sender"). A 65-byte compact signature in base64: a header byte
// (27-30 uncompressed key, P2PKH; 31-34 compressed key, P2PKH; 35-38 P2SH-P2WPKH; 39-42 P2WPKH),
// then r and s. The public key is recovered from the signature over
// sha256d(varint(24) "Bitcoin Signed Message:\n" varint(len) message); what it proves is control of
// the output scripts that key pays to. The header's address type is not trusted (wallets disagree
// on it for segwit): a compressed key answers for its P2PKH, P2WPKH and P2SH-P2WPKH scripts, an
// uncompressed one only for P2PKH (segwit needs compressed keys). Taproot and script addresses
// other than P2SH-P2WPKH cannot sign this way (BIP-322 is not supported).

import { createHash } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';

const PREFIX = Buffer.from('\x18Bitcoin Signed Message:\n', 'utf8');

const sha256 = (b: Uint8Array): Buffer => createHash('sha256').update(b).digest();
const hash160 = (b: Uint8Array): Buffer => createHash('ripemd160').update(sha256(b)).digest();

function varint(n: number): Buffer {
  if (n < 0xfd) return Buffer.from([n]);
  if (n <= 0xffff) {
    const b = Buffer.alloc(3);
    b[0] = 0xfd;
    b.writeUInt16LE(n, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = 0xfe;
  b.writeUInt32LE(n, 1);
  return b;
}

/** The digest a BIP-137 signature signs. */
export function messageHash(message: string): Buffer {
  const m = Buffer.from(message, 'utf8');
  return sha256(sha256(Buffer.concat([PREFIX, varint(m.length), m])));
}

/**
 * The output scripts (lower-case hex) whose key made `signatureB64` over `message`, or an empty
 * list when the signature is malformed or recovers no key.
 */
export function signerScripts(message: string, signatureB64: string): string[] {
  if (!/^[A-Za-z0-9+/]{87}=$/.test(signatureB64)) return [];
  const sig = Buffer.from(signatureB64, 'base64');
  const header = sig[0] as number;
  if (sig.length !== 65 || header < 27 || header > 42) return [];
  const compressed = header >= 31;
  let pubkey: Uint8Array;
  try {
    const point = secp256k1.Signature.fromCompact(sig.subarray(1))
      .addRecoveryBit((header - 27) & 3)
      .recoverPublicKey(messageHash(message));
    pubkey = point.toRawBytes(compressed);
  } catch {
    return [];
  }
  const h = hash160(pubkey).toString('hex');
  const p2pkh = `76a914${h}88ac`;
  if (!compressed) return [p2pkh];
  const p2wpkh = `0014${h}`;
  return [p2pkh, p2wpkh, `a914${hash160(Buffer.from(p2wpkh, 'hex')).toString('hex')}87`];
}
