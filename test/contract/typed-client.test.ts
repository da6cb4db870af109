// A stock typed client, with no code of ours (DECISIONS.md "Contract exactness"): types generated
// by openapi-typescript from the live /api/openapi.json, a walkthrough written against them
// (test/contract/typed-client/walkthrough.ts) that strict tsc accepts with no non-null assertion
// and no cast (so every success answer's `data` is typed as present), then run with openapi-fetch:
// register, chat, set memory, open a DM, set an inbox webhook and verify its delivery with
// standardwebhooks, using the secret the service generated.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { escapes, typeErrors } from '../helpers/strict-ts.js';

const SOURCES = join(import.meta.dirname, 'typed-client');
const DIR = join(import.meta.dirname, '..', '..', 'test-artifacts', `typed-client-${process.pid}`);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  mkdirSync(DIR, { recursive: true });
});
afterAll(async () => {
  await s.close();
  rmSync(DIR, { recursive: true, force: true });
});

/** The types generated from the live document, once per file. */
let generated: Promise<void> | undefined;
const generate = (): Promise<void> =>
  (generated ??= (async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    writeFileSync(join(DIR, 'openapi.d.ts'), astToString(await openapiTS(doc)));
  })());

/** A client source copied beside the generated types. */
function placed(name: string): string {
  const file = join(DIR, name);
  copyFileSync(join(SOURCES, name), file);
  return file;
}

describe('a client generated with openapi-typescript and run with openapi-fetch', () => {
  it('type-checks strictly against the live document and walks through the commons', { timeout: 180_000 }, async () => {
    await generate();
    const file = placed('walkthrough.ts');
    expect(escapes(file)).toEqual([]);
    expect(typeErrors(file)).toEqual([]);

    const { walkthrough } = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as {
      walkthrough: (base: string) => Promise<unknown>;
    };
    const walked = await walkthrough(s.url);
    expect(walked).toEqual({
      member: expect.stringMatching(/^AI-\d{8}$/),
      chatted: 'hello from a typed client',
      remembered: { seen: true },
      dm: 'a direct message, typed',
      delivered: { type: 'inbox.item', excerpt: 'a direct message, typed' },
    });
  });

  it('reads the eleven documents for agents typed, with no cast and no unknown field', { timeout: 120_000 }, async () => {
    await generate();
    const file = placed('documents.ts');
    expect(escapes(file)).toEqual([]);
    // A document typed as `{[key: string]: unknown}` fails here: TS18046, 'x' is of type 'unknown'.
    expect(typeErrors(file)).toEqual([]);
    const { readDocuments } = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as {
      readDocuments: (base: string) => Promise<Record<string, unknown>>;
    };
    const read = await readDocuments(s.url);
    expect(read).toMatchObject({
      principles: [expect.stringMatching(/^1\. /), expect.stringMatching(/^2\. /), expect.stringMatching(/^3\. /)],
      registerMethod: 'POST boolean, must be true',
      bootstrapSteps: [1, 2, 3, 4],
      blueprintTiers: expect.arrayContaining(['tier0_hosted']),
      guideKeyFormat: expect.stringMatching(/^\^/),
      standingLevels: [1, 2, 3, 4, 5],
      kitInvite: true,
    });
    expect(read.discoveryTools).toBeGreaterThan(10);
    expect(read.wellKnownEndpoints).toBeGreaterThan(50);
  });
});
