// The client's socket address as text, spelled as uWS's getRemoteAddressAsText() spells it
// ("127.0.0.1"; an IPv6 peer "0000:0000:...:0001"), read the cheaper way on the hot path: the
// address's bytes (getRemoteAddress: a copy of 4 or 16 bytes) rather than its text (which uWS
// formats with snprintf per request, about 0.1 us under load, and which node then decodes from
// UTF-8 into a string). An IPv4 address's text is made once and kept, keyed by its 32 bits; any
// other address takes the text call. Measured in docs/benchmarks-history.md (2026-11-29 afternoon).
// Every door reads its peer here: the HTTP pipeline and the lean read, the stream's upgrade, the
// relay, the web-standard adapter.
import { Buffer } from 'node:buffer';

/** What reading a peer address needs of a uWS response (or of an upgrade's). */
export interface PeerSource {
  getRemoteAddress(): ArrayBuffer;
  getRemoteAddressAsText(): ArrayBuffer;
}

/** IPv4 texts kept (forgotten all at once past this: a cache, not a record). */
const KEPT = 8192;
const ipv4 = new Map<number, string>();

/** The peer's address as uWS's text form, the same string getRemoteAddressAsText() gives. */
export function peerAddress(res: PeerSource): string {
  const bytes = res.getRemoteAddress();
  if (bytes.byteLength !== 4) return Buffer.from(res.getRemoteAddressAsText()).toString();
  const b = new Uint8Array(bytes);
  const a0 = b[0] as number;
  const a1 = b[1] as number;
  const a2 = b[2] as number;
  const a3 = b[3] as number;
  // A signed 32-bit key: a small integer to V8, hashed without allocating.
  const key = (a0 << 24) | (a1 << 16) | (a2 << 8) | a3;
  let text = ipv4.get(key);
  if (text === undefined) {
    text = `${a0}.${a1}.${a2}.${a3}`;
    if (ipv4.size >= KEPT) ipv4.clear();
    ipv4.set(key, text);
  }
  return text;
}
