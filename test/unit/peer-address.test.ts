// The client address as the HTTP layer reads it (src/transport/edge/peer.ts): the same text uWS's
// getRemoteAddressAsText() gives, from the address's bytes for IPv4 and from that text otherwise.
import { expect, it } from 'vitest';
import { peerAddress } from '../../src/transport/edge/peer.js';

const ab = (bytes: number[]): ArrayBuffer => new Uint8Array(bytes).buffer;
const source = (bytes: number[], text: string) => {
  const calls = { text: 0 };
  return {
    calls,
    getRemoteAddress: () => ab(bytes),
    getRemoteAddressAsText: () => {
      calls.text++;
      return ab([...Buffer.from(text, 'latin1')]);
    },
  };
};

it('spells an IPv4 address from its bytes as uWS spells it, without asking for the text', () => {
  for (const [bytes, text] of [
    [[127, 0, 0, 1], '127.0.0.1'],
    [[255, 255, 255, 255], '255.255.255.255'],
    [[192, 0, 2, 9], '192.0.2.9'],
    [[0, 0, 0, 0], '0.0.0.0'],
  ] as [number[], string][]) {
    const s = source(bytes, 'not asked');
    expect(peerAddress(s)).toBe(text);
    // Kept: the second read of the same address is the same string.
    expect(peerAddress(s)).toBe(text);
    expect(s.calls.text).toBe(0);
  }
  // Addresses differing in one byte are not mixed up (the key is all 32 bits, the sign bit too).
  expect(peerAddress(source([128, 0, 0, 1], ''))).toBe('128.0.0.1');
  expect(peerAddress(source([0, 0, 0, 1], ''))).toBe('0.0.0.1');
});

it("takes uWS's text for any other address (IPv6, IPv4 mapped into IPv6, none)", () => {
  const v6 = source([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 127, 0, 0, 1], '0000:0000:0000:0000:0000:ffff:7f00:0001');
  expect(peerAddress(v6)).toBe('0000:0000:0000:0000:0000:ffff:7f00:0001');
  expect(v6.calls.text).toBe(1);
  const none = source([], '');
  expect(peerAddress(none)).toBe('');
  expect(none.calls.text).toBe(1);
});
