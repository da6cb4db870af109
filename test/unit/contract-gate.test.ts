// The HTTP contract gate's own rules (test/helpers/contract-gate.ts, gate-setup.ts): an answer that
// is not JSON where the operation is documented as JSON breaks the contract, and a 5xx answer fails
// the test that received it unless that test said it provokes server errors.
import { describe, expect, it } from 'vitest';
import { checkAnswer, expectServerErrors, serviceOrigins } from '../helpers/contract-gate.js';
import { inspect, serverErrorsSeen } from '../helpers/gate-setup.js';

const UNAVAILABLE = JSON.stringify({
  success: false,
  data: null,
  error: { code: 'UNAVAILABLE', message: 'the database is unreachable', next: { method: 'GET', path: '/api/v1/health' } },
  timestamp: new Date().toISOString(),
});

describe('the contract gate', () => {
  it('fails a non-JSON answer on an operation documented as JSON, and passes documented non-JSON', () => {
    expect(checkAnswer('GET', '/api/v1/chat', 200, 'text/html; charset=utf-8', '<html></html>')).toEqual([
      expect.stringContaining('GET /api/v1/chat -> 200: answered text/html; charset=utf-8 where the document promises application/json'),
    ]);
    expect(checkAnswer('POST', '/api/v1/chat', 400, 'text/plain', 'bad')).toHaveLength(1);
    expect(checkAnswer('GET', '/api/v1/chat', 200, '', '')).toHaveLength(1);
    // An RSS feed is documented as XML: it passes as such.
    expect(checkAnswer('GET', '/feed.xml', 200, 'application/rss+xml; charset=utf-8', '<rss/>')).toEqual([]);
    expect(checkAnswer('GET', '/api/v1/chat', 304, '', '')).toEqual([]);
  });

  it('records every 5xx a test receives; only a test that expects them keeps them from failing it', () => {
    const origin = 'http://127.0.0.1:9';
    serviceOrigins.add(origin);
    expectServerErrors();
    const before = serverErrorsSeen().length;
    inspect('GET', `${origin}/api/v1/chat`, 503, new Headers({ 'content-type': 'application/json' }), UNAVAILABLE);
    inspect(
      'GET',
      `${origin}/api/v1/chat`,
      400,
      new Headers({ 'content-type': 'application/json' }),
      UNAVAILABLE.replace('UNAVAILABLE', 'VALIDATION_FAILED'),
    );
    expect(serverErrorsSeen().slice(before)).toEqual([
      expect.stringContaining('GET /api/v1/chat -> 503: a server error the test did not expect'),
    ]);
  });
});
