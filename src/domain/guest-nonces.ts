// The nonces of guest tokens (src/domain/guests.ts): a written guest's token nonce (bytes) and a
// read's provisional token nonce (base64url characters), each cut from a pool of random bytes
// refilled 512 at a time (one system call per 512 tokens), so that every token is its own.
import { randomFillSync } from 'node:crypto';
import { NONCE_BYTES, READ_NONCE_BYTES, READ_NONCE_CHARS } from './tokens.js';

// Nonces are cut from a pool of random bytes refilled 512 at a time: one system call per 512 reads.
const pool = Buffer.alloc(NONCE_BYTES * 512);
let poolAt = pool.length;
export function nonce(): Buffer {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += NONCE_BYTES;
  return pool.subarray(poolAt - NONCE_BYTES, poolAt);
}

// Read nonces: a pool of random bytes, encoded once per 512 reads, cut READ_NONCE_CHARS at a time
// (9 bytes are 12 characters with no spare bits, so each cut is one spelling of 9 random bytes).
// The pool is kept as those characters' bytes, encoded here into buffers made once (a refill
// allocates nothing the size of the pool: glibc's malloc gathers its free small blocks on every
// request of a kilobyte or more, measured 0.2-0.3 us a read under load); the lean read path writes
// a nonce straight into the answer's header bytes (`readNonceInto`), the general path takes a string.
const readRaw = Buffer.alloc(READ_NONCE_BYTES * 512);
const readBytes = Buffer.alloc((readRaw.length / 3) * 4);
let readAt = readBytes.length;
const B64URL = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1');
function nextNonceAt(): number {
  if (readAt === readBytes.length) {
    base64urlInto(randomFillSync(readRaw), readBytes);
    readAt = 0;
  }
  readAt += READ_NONCE_CHARS;
  return readAt - READ_NONCE_CHARS;
}
/** Writes the base64url spelling of `src` (a multiple of three bytes long) at the start of `out`,
 * as bytes: what `src.toString('base64url')` spells, without the string. */
export function base64urlInto(src: Uint8Array, out: Uint8Array): void {
  for (let i = 0, o = 0; i + 2 < src.length; i += 3, o += 4) {
    const n = ((src[i] as number) << 16) | ((src[i + 1] as number) << 8) | (src[i + 2] as number);
    out[o] = B64URL[n >> 18] as number;
    out[o + 1] = B64URL[(n >> 12) & 63] as number;
    out[o + 2] = B64URL[(n >> 6) & 63] as number;
    out[o + 3] = B64URL[n & 63] as number;
  }
}

export function readNonce(): string {
  const at = nextNonceAt();
  return readBytes.toString('latin1', at, at + READ_NONCE_CHARS);
}

/** Writes a fresh read nonce (READ_NONCE_CHARS base64url characters, as bytes) at `at`: a
 * provisional token is its window's `base` followed by one (`GuestIssuer.provisionalBase`). */
export function readNonceInto(out: Uint8Array, at: number): void {
  const from = nextNonceAt();
  for (let i = 0; i < READ_NONCE_CHARS; i++) out[at + i] = readBytes[from + i] as number;
}
