// A second stock generator (DECISIONS.md "Contract exactness"): @hey-api/openapi-ts (pinned)
// generates its fetch client, SDK and types from the live /api/openapi.json; a walkthrough written
// against them (test/contract/typed-client/hey-api-walkthrough.ts: register, chat, memory, a task
// from its post to its approval) must pass strict tsc with no non-null assertion and no cast, then
// runs against the server.
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient } from '@hey-api/openapi-ts';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

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

/** Strict tsc's complaints, as "file:line: message". */
function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    skipLibCheck: true,
    noEmit: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const at = d.file && d.start !== undefined ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
    return `${at}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

/** Non-null assertions and casts in a source file. */
function escapes(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isNonNullExpression(n) || ts.isAsExpression(n) || ts.isTypeAssertionExpression(n)) found.push(n.getText(source));
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}

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
    expect(typeErrors(file)).toEqual([]);

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
