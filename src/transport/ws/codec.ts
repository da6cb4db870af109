// The two encodings of the stream: JSON text frames, or MessagePack binary frames for clients
// that asked for commons.msgpack.v1. Plain maps (no msgpackr records) so any MessagePack library
// can read them.
import { Packr, Unpackr } from 'msgpackr';
import sjson from 'secure-json-parse';
import { CommonsError } from '../../domain/errors.js';

export type Encoding = 'json' | 'msgpack';
export const ENCODINGS: readonly Encoding[] = ['json', 'msgpack'];

const packr = new Packr({ useRecords: false, moreTypes: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

export function encode(frame: unknown, enc: Encoding): string | Buffer {
  return enc === 'json' ? JSON.stringify(frame) : packr.pack(frame);
}

export const byteLength = (p: string | Buffer): number => (typeof p === 'string' ? Buffer.byteLength(p) : p.length);

/** Decodes a client frame by its frame type (text: JSON, binary: MessagePack). */
export function decode(data: ArrayBuffer, isBinary: boolean): unknown {
  try {
    if (isBinary) return unpackr.unpack(new Uint8Array(data.slice(0)));
    return sjson.parse(Buffer.from(data).toString('utf8'), undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new CommonsError('INVALID_JSON', isBinary ? 'the frame is not valid MessagePack' : 'the frame is not valid JSON');
  }
}
