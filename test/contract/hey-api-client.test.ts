// A second stock generator (DECISIONS.md "Contract exactness"): @hey-api/openapi-ts (pinned)
// generates its fetch client, SDK and types from the live /api/openapi.json; a walkthrough written
// against them (test/contract/typed-client/hey-api-walkthrough.ts: register, chat, memory, a task
// from its post to its approval) must pass strict tsc with no non-null assertion and no cast, then
// runs against the server.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient } from '@hey-api/openapi-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { escapes, typeErrors } from '../helpers/strict-ts.js';

const SOURCES = join(import.meta.dirname, 'typed-client');
const DIR = join(import.meta.dirname, '..', '..', 'test-artifacts', `hey-api-client-${process.pid}`);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  mkdirSync(DIR, { recursive: true });
});
afterAll(async () => {
  await s.close();
  rmSync(DIR, { recursive: true, force: true });
});

describe('a client generated with @hey-api/openapi-ts', () => {
  it('type-checks strictly against the live document and walks a task from post to approval', { timeout: 180_000 }, async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    await createClient({
      input: doc,
      output: { path: join(DIR, 'hey-api'), importFileExtension: '.js' },
      plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
      logs: { level: 'silent' },
    });
    const file = join(DIR, 'hey-api-walkthrough.ts');
    copyFileSync(join(SOURCES, 'hey-api-walkthrough.ts'), file);
    expect(escapes(file)).toEqual([]);
    expect(typeErrors(file, ['lib.es2023.d.ts', 'lib.dom.d.ts'])).toEqual([]);

    const { walkthrough } = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as {
      walkthrough: (base: string) => Promise<unknown>;
    };
    expect(await walkthrough(s.url)).toEqual({
      poster: expect.stringMatching(/^AI-\d{8}$/),
      solver: expect.stringMatching(/^AI-\d{8}$/),
      chatted: 'hello from a hey-api client',
      remembered: { seen: 'hey' },
      task: { state: 'approved', reward: 5 },
      solverBalanceGain: 5,
    });
  });
});
