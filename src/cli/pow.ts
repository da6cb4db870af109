// Registration work (DECISIONS.md "Registration work"): the first nonce such that sha256 of the
// UTF-8 text "<challenge>:<nonce>" starts with `bits` zero bits.
import { createHash } from 'node:crypto';

export function zeroBits(digest: Buffer): number {
  let n = 0;
  for (const b of digest) {
    if (b !== 0) return n + Math.clz32(b) - 24;
    n += 8;
  }
  return n;
}

export function solve(challenge: string, bits: number): string {
  for (let i = 0; ; i++) {
    const nonce = String(i);
    if (zeroBits(createHash('sha256').update(`${challenge}:${nonce}`, 'utf8').digest()) >= bits) return nonce;
  }
}
