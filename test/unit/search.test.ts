// The pure parts of search (docs/search.md): the words an excerpt is cut around, the excerpt
// itself, and the cursor's round trip and refusals.
import { describe, expect, it } from 'vitest';
import { CommonsError } from '../../src/domain/errors.js';
import { decodeCursor, EXCERPT_MAX, encodeCursor, excerpt, wantedTerms } from '../../src/domain/search.js';
import { literal, phrasePairs } from '../../src/store/search.js';

describe('phrasePairs (the chat pair index, sql/021_search_pairs.sql)', () => {
  it('takes every adjacent pair of every phrase, from query trees as PostgreSQL prints them', () => {
    expect(phrasePairs("'blue' <-> 'pangolin'")).toEqual(['blue pangolin']);
    expect(phrasePairs("'a' <-> 'b' <-> 'c' & 'd'")).toEqual(['a b', 'b c']);
    expect(phrasePairs("'it''s' <-> 'here'")).toEqual(["it's here"]);
    expect(phrasePairs("'x' & 'y'")).toEqual([]);
  });

  it('requires nothing when a match need not hold a pair: an OR or a NOT anywhere, or a wider distance', () => {
    expect(phrasePairs("'a' <-> 'b' | 'c'")).toEqual([]);
    expect(phrasePairs("'w' & !( 'a' <-> 'b' )")).toEqual([]);
    expect(phrasePairs("'a' <2> 'b'")).toEqual([]);
  });
});

describe('literal (a search is one simple-protocol message with its values written in)', () => {
  it('is an escape string with the quote doubled and the backslash escaped, nothing else touched', () => {
    expect(literal('pangolin')).toBe("E'pangolin'");
    expect(literal("o'brien")).toBe("E'o''brien'");
    expect(literal('back\\slash')).toBe("E'back\\\\slash'");
    expect(literal("\\'); DROP TABLE chat_messages; --")).toBe("E'\\\\''); DROP TABLE chat_messages; --'");
    expect(literal('$$ 東京 "x"')).toBe(`E'$$ 東京 "x"'`);
  });

  it('refuses a NUL, which the protocol cannot carry', () => {
    expect(() => literal('a\0b')).toThrow(/NUL/);
  });
});

describe('wantedTerms', () => {
  it('keeps words and phrases, drops excluded ones and `or`, lowercases', () => {
    expect(wantedTerms('Blue "Pangolin Sings" -noise -"bad phrase" or whale,')).toEqual(['blue', 'pangolin sings', 'whale']);
    expect(wantedTerms('-only')).toEqual([]);
  });
});

describe('excerpt', () => {
  it('is the whole text, whitespace folded, when it fits', () => {
    expect(excerpt('a  b\n\nc', ['b'])).toBe('a b c');
  });

  it('cuts at most 280 characters around the first wanted word, marking the cuts', () => {
    const text = `${'lead '.repeat(100)}target ${'tail '.repeat(100)}`;
    const e = excerpt(text, ['target']);
    expect(e.length).toBe(EXCERPT_MAX);
    expect(e.startsWith('…lead')).toBe(true);
    expect(e.endsWith('…')).toBe(true);
    expect(e.indexOf('target')).toBeGreaterThan(40);
    expect(e.indexOf('target')).toBeLessThan(70);
  });

  it('starts at the beginning when the word is near it, and ends unmarked at the text end', () => {
    const start = excerpt(`target ${'x'.repeat(400)}`, ['target']);
    expect(start.startsWith('target')).toBe(true);
    expect(start.length).toBe(EXCERPT_MAX);
    const end = excerpt(`${'y '.repeat(200)}target end`, ['target']);
    expect(end.endsWith('target end')).toBe(true);
    expect(end.length).toBeLessThanOrEqual(EXCERPT_MAX);
  });
});

describe('cursor', () => {
  const c = { rank: '0.0607927', at: '2026-11-23T13:00:00.123456Z', type: 'chat' as const, id: '0b6f8c2e-1d7a-4e7b-9a51-3c2d8f1e0a11' };
  it('round-trips, with the ranks and days PostgreSQL writes', () => {
    expect(decodeCursor(encodeCursor(c))).toEqual(c);
    for (const rank of ['0', '1e-20', '6.07927e-05', '0.000123', '0.99999994'])
      expect(decodeCursor(encodeCursor({ ...c, rank }))).toEqual({ ...c, rank });
    for (const at of ['2024-02-29T23:59:59.999999Z', '2000-02-29T00:00:00.000000Z', '2026-12-31T00:00:00.000000Z'])
      expect(decodeCursor(encodeCursor({ ...c, at }))).toEqual({ ...c, at });
    const ai = { ...c, type: 'ai' as const, id: '12' };
    expect(decodeCursor(encodeCursor(ai))).toEqual(ai);
  });
  it.each([
    ['not a cursor', 'x'],
    ['a cursor of the old form (base64 of JSON)', Buffer.from(JSON.stringify(['0.1', c.at, c.type, c.id])).toString('base64url')],
    ['a rank with an exponent no real can hold', encodeCursor({ ...c, rank: '1e-99' })],
    ['an ai hit with a uuid', encodeCursor({ ...c, type: 'ai' })],
    ['an unknown type', encodeCursor({ ...c, type: 'memory' as never })],
    ['a time without microseconds', encodeCursor({ ...c, at: '2026-11-23T13:00:00Z' })],
    ['a rank that is not a number', encodeCursor({ ...c, rank: 'NaN; DROP' })],
    ['a rank no real can hold', encodeCursor({ ...c, rank: '1e999' })],
    ['a day the calendar does not have', encodeCursor({ ...c, at: '2026-02-30T00:00:00.000000Z' })],
    ['hour 24', encodeCursor({ ...c, at: '2026-02-28T24:00:00.000000Z' })],
    ['February 29 of a common year', encodeCursor({ ...c, at: '2100-02-29T00:00:00.000000Z' })],
  ])('refuses %s with VALIDATION_FAILED on query.before', (_what, s) => {
    try {
      decodeCursor(s);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CommonsError);
      expect((e as CommonsError).code).toBe('VALIDATION_FAILED');
      expect((e as CommonsError).fields?.[0]?.path).toBe('query.before');
    }
  });
});
