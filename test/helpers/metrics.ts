// Prometheus samples from a test server's /metrics.
import { expect } from 'vitest';
import type { TestServer } from './server.js';

export async function scrape(s: TestServer): Promise<string> {
  const r = await s.call('GET', '/metrics');
  expect(r.status).toBe(200);
  return r.text;
}

/** The value of one series (`name` or `name{labels}`), or null when the text has no such line. */
export function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

/** The value of a series that must be present (an unlabelled counter or gauge always is). */
export function seriesValue(text: string, series: string): number {
  const v = sample(text, series);
  if (v === null) throw new Error(`/metrics has no series ${series}`);
  return v;
}
