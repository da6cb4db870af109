// Random UUIDs (version 4, lower-case hex: the form node's randomUUID gives) for the hot paths: a
// chat message's id, a request's id. node's randomUUID builds its string from twenty concatenated
// pieces (about 500 bytes of short-lived heap an id, measured: docs/bench-chat-47.md "Fourth
// round"); here the digits are written as bytes and read back as one string. Random bytes come
// from a pool refilled 256 ids at a time, as node's randomUUID does.
import { randomFillSync } from 'node:crypto';

/** Characters of a UUID (8-4-4-4-12 hex digits). */
export const UUID_CHARS = 36;

const HEX = Buffer.from('0123456789abcdef', 'latin1');
const pool = Buffer.alloc(16 * 256);
let at = pool.length;
const scratch = Buffer.alloc(UUID_CHARS);

/** Writes a fresh random UUID at `offset` of `out` (UUID_CHARS bytes). */
export function uuidInto(out: Uint8Array, offset: number): void {
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

/** A fresh random UUID as a string. */
export function uuid(): string {
  uuidInto(scratch, 0);
  return scratch.toString('latin1', 0, UUID_CHARS);
}
