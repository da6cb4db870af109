// Values built once per version (src/domain/versioned-memo.ts): a value is given back only for the
// version it was stored with, and the entry kept for the last key read never hides a newer one.
import { expect, it } from 'vitest';
import { VersionedMemo } from '../../src/domain/versioned-memo.js';

it('answers the stored value for its version only, and a value stored later at once', () => {
  const m = new VersionedMemo();
  expect(m.get('a', 1)).toBeUndefined();
  m.set('a', 1, 'one');
  expect(m.get('a', 1)).toBe('one');
  expect(m.get('a', 1)).toBe('one');
  expect(m.get('a', 2)).toBeUndefined();
  m.set('a', 2, 'two');
  expect(m.get('a', 2)).toBe('two');
  expect(m.get('a', 1)).toBeUndefined();
  // Another key between two reads of the first.
  m.set('b', 2, 'bee');
  expect(m.get('b', 2)).toBe('bee');
  expect(m.get('a', 2)).toBe('two');
  // A full memo starts again: nothing stale is answered from the last read.
  for (let i = 0; i < 300; i++) m.set(`k${i}`, 1, i);
  expect(m.get('a', 2)).toBeUndefined();
});
