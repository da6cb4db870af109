import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UUID_CHARS, uuid, uuidInto } from '../../src/domain/uuid.js';

// The hot paths' ids (src/domain/uuid.ts) take the form node's randomUUID gives: version 4,
// RFC 9562 variant, lower-case hex; fresh each call, also across the random pool's refill.
const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuid', () => {
  it('gives version 4 UUIDs in randomUUID form, none repeated across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const id = uuid();
      expect(id).toMatch(V4);
      seen.add(id);
    }
    expect(seen.size).toBe(1000);
    expect(randomUUID()).toMatch(V4);
  });

  it('writes the same form as bytes at an offset, leaving the rest alone', () => {
    const out = Buffer.alloc(UUID_CHARS + 4, 0x78);
    uuidInto(out, 2);
    expect(out.toString('latin1', 0, 2)).toBe('xx');
    expect(out.toString('latin1', 2, 2 + UUID_CHARS)).toMatch(V4);
    expect(out.toString('latin1', 2 + UUID_CHARS)).toBe('xx');
  });
});
