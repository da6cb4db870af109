// Request ids for the lean read path (src/transport/http/fast-read.ts), written as bytes into the
// answer's preformatted headers: a random UUID (version 4, lower-case hex, the form randomUUID
// gives the general pipeline) without a string per request. Random bytes come from a pool
// refilled 256 ids at a time, as node's randomUUID does.
import { randomFillSync } from 'node:crypto';

/** Characters of a request id (8-4-4-4-12 hex digits). */
export const REQUEST_ID_CHARS = 36;

const HEX = Buffer.from('0123456789abcdef', 'latin1');
const pool = Buffer.alloc(16 * 256);
let at = pool.length;

/** Writes a fresh request id at `offset` of `out` (REQUEST_ID_CHARS bytes). */
export function requestIdInto(out: Uint8Array, offset: number): void {
  if (at === pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  let o = offset;
  for (let i = 0; i < 16; i++) {
    let b = pool[at + i] as number;
    if (i === 6)
      b = (b & 0x0f) | 0x40; // version 4
    else if (i === 8) b = (b & 0x3f) | 0x80; // RFC 9562 variant
    if (i === 4 || i === 6 || i === 8 || i === 10) out[o++] = 0x2d; // '-'
    out[o++] = HEX[b >> 4] as number;
    out[o++] = HEX[b & 0x0f] as number;
  }
  at += 16;
}
