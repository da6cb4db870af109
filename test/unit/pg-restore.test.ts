// The restore from newer client tools (src/store/pg-restore.ts): only the prelude's SETs of
// settings the server lacks are left out; a data row that reads like one stays.
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { expect, it } from 'vitest';
import { preludeFilter } from '../../src/store/pg-restore.js';

const known = new Set(['statement_timeout', 'lock_timeout', 'client_encoding']);
const filtered = (chunks: string[]) => text(Readable.from(chunks.map((c) => Buffer.from(c))).pipe(preludeFilter(known)));

const script = [
  '--',
  '-- PostgreSQL database dump',
  '--',
  '',
  '\\restrict F2TQfNjJCPimND7hHvYG8CgTqx',
  '',
  '-- Dumped from database version 15.20',
  '',
  'BEGIN;',
  '',
  'SET statement_timeout = 0;',
  'SET lock_timeout = 0;',
  'SET transaction_timeout = 0;',
  "SET client_encoding = 'UTF8';",
  "SELECT pg_catalog.set_config('search_path', '', false);",
  '',
  'CREATE TABLE public.chat (body text);',
  'COPY public.chat (body) FROM stdin;',
  'SET transaction_timeout = 0;',
  '\\.',
  'COMMIT;',
  '',
].join('\n');

it('leaves out the unknown setting of the prelude and nothing else, however the script is cut', async () => {
  const want = script.replace('SET transaction_timeout = 0;\n', '');
  expect(want.match(/transaction_timeout/g)).toHaveLength(1); // the data row's
  expect(await filtered([script])).toBe(want);
  // Cut inside lines, one byte at a time, and across the prelude's end.
  expect(await filtered(script.split(''))).toBe(want);
  expect(await filtered([script.slice(0, 150), script.slice(150)])).toBe(want);
});

it('keeps every line when the server knows every setting', async () => {
  const all = new Set([...known, 'transaction_timeout']);
  expect(await text(Readable.from([Buffer.from(script)]).pipe(preludeFilter(all)))).toBe(script);
});

it('passes the data bytes as they came, a UTF-8 character cut between chunks included', async () => {
  const bytes = Buffer.from(`SET transaction_timeout = 0;\nCOPY t (b) FROM stdin;\nnaïve → 🙂\n\\.\n`);
  const cut = bytes.indexOf(Buffer.from('🙂')) + 2;
  const out = Buffer.concat(
    await Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)])
      .pipe(preludeFilter(known))
      .toArray(),
  );
  expect(out.toString('utf8')).toBe('COPY t (b) FROM stdin;\nnaïve → 🙂\n\\.\n');
});
