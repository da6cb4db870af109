// The proposal lifecycle machine, directly (pure): open -> closed at closes_at; votes only while open.
import { describe, expect, it } from 'vitest';
import { proposalNext, proposalStateAt } from '../../src/machines/proposal.js';

describe('proposal machine', () => {
  it('allows votes while open and nothing once closed', () => {
    expect(proposalNext('open', { type: 'VOTE' })).toBe('open');
    expect(proposalNext('open', { type: 'CLOSE' })).toBe('closed');
    expect(proposalNext('closed', { type: 'VOTE' })).toBeNull();
    expect(proposalNext('closed', { type: 'CLOSE' })).toBeNull();
  });

  it('is open until closes_at and closed from that instant', () => {
    const closes = new Date('2026-03-01T12:00:00Z');
    expect(proposalStateAt(closes, new Date(closes.getTime() - 1))).toBe('open');
    expect(proposalStateAt(closes, closes)).toBe('closed');
    expect(proposalStateAt(closes, new Date(closes.getTime() + 1))).toBe('closed');
  });
});
