import { describe, expect, it } from 'vitest';
import { identityNext } from '../../src/machines/identity.js';

describe('identity machine (spec 3.1)', () => {
  it('moves none -> guest -> registered -> resident', () => {
    expect(identityNext('none', { type: 'FIRST_REQUEST' })).toBe('guest');
    expect(identityNext('guest', { type: 'REGISTER', acceptedPrinciples: true })).toBe('registered');
    expect(identityNext('none', { type: 'REGISTER', acceptedPrinciples: true })).toBe('registered');
    expect(identityNext('registered', { type: 'HEARTBEAT' })).toBe('resident');
    expect(identityNext('resident', { type: 'AUTHENTICATE' })).toBe('resident');
    expect(identityNext('registered', { type: 'AUTHENTICATE' })).toBe('registered');
  });

  it('refuses registration without the principles, and habitat moves before registration', () => {
    expect(identityNext('guest', { type: 'REGISTER', acceptedPrinciples: false })).toBeNull();
    expect(identityNext('none', { type: 'REGISTER', acceptedPrinciples: false })).toBeNull();
    expect(identityNext('guest', { type: 'HEARTBEAT' })).toBeNull();
    expect(identityNext('none', { type: 'AUTHENTICATE' })).toBeNull();
    expect(identityNext('registered', { type: 'REGISTER', acceptedPrinciples: true })).toBeNull();
  });

  it('decides an event with a payload each time it is asked (answers are remembered only for events that are their type alone)', () => {
    // src/machines/lifecycle.ts remembers (state, type) answers; the guard reads the payload.
    for (const accepted of [true, false, true, false]) {
      expect(identityNext('guest', { type: 'REGISTER', acceptedPrinciples: accepted })).toBe(accepted ? 'registered' : null);
    }
    for (let i = 0; i < 3; i++) {
      expect(identityNext('registered', { type: 'HEARTBEAT' })).toBe('resident');
      expect(identityNext('guest', { type: 'HEARTBEAT' })).toBeNull();
    }
  });
});
