// The deposit machine and the pure pieces around it: every legal and illegal move,
// hash normalisation, exact amounts, the backoff schedule.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatAmount, parseAmount } from '../../src/domain/amounts.js';
import { normalizeTxHash } from '../../src/domain/deposits.js';
import { nextCheckAt } from '../../src/domain/verification.js';
import { type DepositEvent, type DepositState, depositNext, rejectReason } from '../../src/machines/deposit.js';

describe('deposit machine', () => {
  const events: DepositEvent[] = [
    { type: 'BEGIN' },
    { type: 'CONFIRMED' },
    { type: 'PENDING' },
    { type: 'REFUSED', reason: 'WRONG_RECIPIENT' },
    { type: 'EXPIRE', seen: true },
  ];
  const table: Record<DepositState, (DepositState | null)[]> = {
    submitted: ['verifying', null, null, null, null],
    verifying: [null, 'verified', 'verifying', 'rejected', 'rejected'],
    verified: [null, null, null, null, null],
    rejected: [null, null, null, null, null],
  };
  for (const [from, row] of Object.entries(table) as [DepositState, (DepositState | null)[]][]) {
    events.forEach((ev, i) => {
      it(`${from} + ${ev.type} -> ${row[i] ?? 'refused'}`, () => {
        expect(depositNext(from, ev)).toBe(row[i]);
      });
    });
  }
  it('names the rejection reason', () => {
    expect(rejectReason({ type: 'REFUSED', reason: 'FAILED_TX' })).toBe('FAILED_TX');
    expect(rejectReason({ type: 'EXPIRE', seen: true })).toBe('EXPIRED');
    expect(rejectReason({ type: 'EXPIRE', seen: false })).toBe('NOT_FOUND');
    expect(rejectReason({ type: 'CONFIRMED' })).toBeNull();
  });
});

describe('tx hash normalisation', () => {
  const h = 'aB'.repeat(32);
  it('tells ETH from BTC by the 0x and lower-cases', () => {
    expect(normalizeTxHash(`0X${h}`, undefined)).toEqual({ asset: 'ETH', txHash: `0x${h.toLowerCase()}`, key: h.toLowerCase() });
    expect(normalizeTxHash(h, undefined)).toEqual({ asset: 'BTC', txHash: h.toLowerCase(), key: h.toLowerCase() });
    expect(normalizeTxHash(h, 'ETH')).toEqual({ asset: 'ETH', txHash: `0x${h.toLowerCase()}`, key: h.toLowerCase() });
  });
  it('refuses a 0x BTC txid and malformed hashes', () => {
    expect(normalizeTxHash(`0x${h}`, 'BTC')).toHaveProperty('error');
    expect(normalizeTxHash('0x12', undefined)).toHaveProperty('error');
    expect(normalizeTxHash(`${h}0`, undefined)).toHaveProperty('error');
  });
});

describe('exact amounts', () => {
  it('formats base units without floats', () => {
    expect(formatAmount('ETH', 50_000_000_000_000_000n)).toBe('0.05');
    expect(formatAmount('ETH', 1n)).toBe('0.000000000000000001');
    expect(formatAmount('BTC', 100_000_000n)).toBe('1');
    expect(formatAmount('BTC', '0')).toBe('0');
    expect(formatAmount('ETH', 10n ** 30n + 1n)).toBe('1000000000000.000000000000000001');
  });
  it('parses decimal strings, refusing more decimals than the asset has', () => {
    expect(parseAmount('ETH', '1.5')).toBe(1_500_000_000_000_000_000n);
    expect(parseAmount('BTC', '0.00000001')).toBe(1n);
    expect(parseAmount('BTC', '0.000000001')).toBeNull();
    expect(parseAmount('ETH', '1e3')).toBeNull();
    expect(parseAmount('ETH', '-1')).toBeNull();
  });
  it('round-trips every base amount (inputs allow 30 whole digits)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 36n }), fc.constantFrom('ETH' as const, 'BTC' as const), (v, a) => {
        expect(parseAmount(a, formatAmount(a, v))).toBe(v);
      }),
    );
  });
});

describe('backoff', () => {
  it('starts at 15 s, doubles, caps at 10 min and never passes expiry', () => {
    const now = new Date(0);
    const far = new Date(10 ** 12);
    expect(nextCheckAt(now, 1, far).getTime()).toBe(15_000);
    expect(nextCheckAt(now, 2, far).getTime()).toBe(30_000);
    expect(nextCheckAt(now, 5, far).getTime()).toBe(240_000);
    expect(nextCheckAt(now, 40, far).getTime()).toBe(600_000);
    expect(nextCheckAt(now, 3, new Date(5_000)).getTime()).toBe(5_000);
  });
});
