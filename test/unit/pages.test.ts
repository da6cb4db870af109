// A page's envelope for the lean read path (src/transport/runner/pages.ts stampedBody): one buffer
// per page, its timestamp rewritten in place when the millisecond changes.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildPage, pageBody, stampedBody } from '../../src/transport/runner/pages.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('stampedBody', () => {
  it('is the page envelope stamped now, the same bytes pageBody builds', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-25T15:00:00.123Z'));
    const page = buildPage({ messages: [{ body: 'héllo "quoted"' }], next_cursor: null });
    const body = stampedBody(page);
    expect(JSON.parse(body.toString('utf8'))).toEqual({
      success: true,
      data: { messages: [{ body: 'héllo "quoted"' }], next_cursor: null },
      error: null,
      timestamp: '2026-11-25T15:00:00.123Z',
    });
    expect(body.equals(pageBody(page))).toBe(true);
  });

  it('reuses its buffer and restamps it when the millisecond changes', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-25T15:00:00.123Z'));
    const page = buildPage({ n: 1 });
    const first = stampedBody(page);
    expect(stampedBody(page)).toBe(first);
    vi.setSystemTime(new Date('2026-11-25T15:00:00.124Z'));
    const second = stampedBody(page);
    expect(second).toBe(first);
    expect(JSON.parse(second.toString()).timestamp).toBe('2026-11-25T15:00:00.124Z');
    // Another page has its own buffer: stamping one never touches the other's bytes.
    const other = buildPage({ n: 2 });
    expect(stampedBody(other)).not.toBe(first);
    expect(JSON.parse(first.toString()).data).toEqual({ n: 1 });
  });
});

describe('pageBody', () => {
  it('keeps a body it handed out when the timestamp is rewritten for the next millisecond', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-25T15:00:00.123Z'));
    const page = buildPage({ n: 3 });
    const first = pageBody(page);
    vi.setSystemTime(new Date('2026-11-25T15:00:00.124Z'));
    const second = pageBody(page);
    expect(stampedBody(page).equals(second)).toBe(true);
    expect(JSON.parse(second.toString()).timestamp).toBe('2026-11-25T15:00:00.124Z');
    expect(JSON.parse(first.toString()).timestamp).toBe('2026-11-25T15:00:00.123Z');
    // The same millisecond: the same body.
    expect(pageBody(page)).toBe(second);
  });
});
