// The two encodings of the stream: JSON text frames, or MessagePack binary frames for clients
// that asked for commons.msgpack.v1. Plain maps (no msgpackr records) so any MessagePack library
// can read them.
import { Packr } from 'msgpackr';
import { decodeJson, decodeMsgpack } from '../admission/decode.js';

export type Encoding = 'json' | 'msgpack';
export const ENCODINGS: readonly Encoding[] = ['json', 'msgpack'];

const packr = new Packr({ useRecords: false, moreTypes: false });

export function encode(frame: unknown, enc: Encoding): string | Buffer {
  return enc === 'json' ? JSON.stringify(frame) : packr.pack(frame);
}

export const byteLength = (p: string | Buffer): number => (typeof p === 'string' ? Buffer.byteLength(p) : p.length);

/** Decodes a client frame by its frame type (text: JSON, binary: MessagePack), as every door
 * decodes (src/transport/admission/decode.ts): a refusal is VALIDATION_FAILED (not UTF-8) or
 * INVALID_JSON. */
export function decode(data: ArrayBuffer, isBinary: boolean): unknown {
  const bytes = new Uint8Array(data.slice(0));
  return isBinary ? decodeMsgpack(bytes, 'frame') : decodeJson(bytes, 'frame');
}
