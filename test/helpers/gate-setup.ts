// Vitest setup file: puts the contract gate (contract-gate.ts) between every test and the service.
// fetch is wrapped for the whole test process, so helpers, SDK clients and tests that fetch the
// server directly are all checked; an answer that breaks the contract fails the test that
// received it (or the file, for requests made in hooks), and so does a 5xx answer the test did
// not say it provokes (expectServerErrors() in contract-gate.ts).
import { afterAll, afterEach, expect } from 'vitest';
import { checkA2a } from './a2a-gate.js';
import { checkAnswer, serverErrors, serviceOrigins } from './contract-gate.js';
import { drainFrameViolations } from './stream-gate.js';

const violations: string[] = [];
/** 5xx answers received, failing the test unless it called expectServerErrors() (contract-gate.ts). */
const unexpected: string[] = [];
const pending = new Set<Promise<void>>();
// The platform's own fetch, kept once per process: where a worker runs several files in turn
// (isolate: false), this file runs again for each, and must not wrap its own wrapper.
const REAL_FETCH = Symbol.for('commons.test.realFetch');
const holder = globalThis as unknown as Record<symbol, typeof fetch>;
holder[REAL_FETCH] ??= globalThis.fetch;
const original = holder[REAL_FETCH];

/** Servers the helpers started or called (test/helpers/server.ts), and any answer of the HTTP
 * pipeline (it always sets X-Request-Id); stand-ins for outside services are not checked. */
const fromService = (url: string, res: Response): boolean => serviceOrigins.has(new URL(url).origin) || res.headers.has('x-request-id');

export function inspect(method: string, url: string, status: number, headers: Headers, text: string, requestBody?: unknown): void {
  const pathname = new URL(url).pathname;
  if (status >= 500)
    unexpected.push(
      `${method} ${pathname} -> ${status}: a server error the test did not expect (expectServerErrors()) ${text.slice(0, 200)}`,
    );
  const found = checkAnswer(method, pathname, status, headers.get('content-type') ?? '', text);
  violations.push(...found);
  if (found.length > 0 || !(headers.get('content-type') ?? '').includes('json')) return;
  try {
    violations.push(...checkA2a(pathname, status, requestBody, JSON.parse(text)));
  } catch {
    // Not JSON: already reported by checkAnswer when the document promised JSON.
  }
}

globalThis.fetch = async function gatedFetch(input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> {
  const requestBody =
    input instanceof Request
      ? await input
          .clone()
          .text()
          .catch(() => undefined)
      : init?.body;
  const res = await original(input, init);
  const url = input instanceof Request ? input.url : String(input);
  if (!fromService(url, res)) return res;
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
  const type = res.headers.get('content-type') ?? '';
  // Streams (SSE) are never read to the end here; JSON bodies are complete documents.
  if (type.startsWith('text/event-stream')) return res;
  const p = res
    .clone()
    .text()
    .then(
      (text) => inspect(method, url, res.status, res.headers, text, requestBody),
      () => undefined,
    )
    .finally(() => pending.delete(p));
  pending.add(p);
  return res;
};

/** The 5xx answers recorded in the running test so far (test/unit/contract-gate.test.ts). */
export const serverErrorsSeen = (): readonly string[] => [...unexpected];

async function drain(): Promise<string[]> {
  await Promise.all([...pending]);
  const errors = unexpected.splice(0);
  if (!serverErrors.expected) violations.push(...errors);
  serverErrors.expected = false;
  return violations.splice(0);
}

afterEach(async () => {
  expect(await drain(), 'answers that break the published contract').toEqual([]);
  expect(drainFrameViolations(), 'stream frames that break the AsyncAPI document').toEqual([]);
});

afterAll(async () => {
  expect(await drain(), 'answers that break the published contract (in hooks)').toEqual([]);
  expect(drainFrameViolations(), 'stream frames that break the AsyncAPI document (in hooks)').toEqual([]);
});
