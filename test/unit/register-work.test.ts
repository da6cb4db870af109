// The difficulty rule and the leading-zero count of registration work (docs/registration-work.md).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { difficultyFor, leadingZeroBits } from '../../src/domain/register-work.js';
import { zeroBits } from '../helpers/pow.js';

describe('difficultyFor', () => {
  it('is the base up to the threshold, 16 above it, one more bit per doubling, at most 24', () => {
    expect(difficultyFor(0, 0, 500)).toBe(0);
    expect(difficultyFor(500, 0, 500)).toBe(0);
    expect(difficultyFor(500, 5, 500)).toBe(5);
    expect(difficultyFor(501, 0, 500)).toBe(16);
    expect(difficultyFor(999, 0, 500)).toBe(16);
    expect(difficultyFor(1000, 0, 500)).toBe(17);
    expect(difficultyFor(4000, 0, 500)).toBe(19);
    expect(difficultyFor(500 * 256, 0, 500)).toBe(24);
    expect(difficultyFor(500 * 100_000, 0, 500)).toBe(24);
    // A base above the flood start is never lowered by a flood.
    expect(difficultyFor(501, 20, 500)).toBe(20);
  });
});

describe('leadingZeroBits', () => {
  it('counts whole zero bytes and the zero bits of the first other byte', () => {
    expect(leadingZeroBits(Buffer.from([0x80, 0]))).toBe(0);
    expect(leadingZeroBits(Buffer.from([0x01, 0xff]))).toBe(7);
    expect(leadingZeroBits(Buffer.from([0, 0, 0x10]))).toBe(19);
    expect(leadingZeroBits(Buffer.alloc(4))).toBe(32);
  });

  it('agrees with the client-side count of the test helper on real digests', () => {
    for (let i = 0; i < 200; i++) {
      const d = createHash('sha256').update(`c:${i}`, 'utf8').digest();
      expect(leadingZeroBits(d)).toBe(zeroBits('c', String(i)));
    }
  });
});
