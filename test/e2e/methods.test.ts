// Unknown and non-HTTP methods (DECISIONS.md "Runtime"; src/transport/edge/method.ts). The same
// tests run on both uWS builds and assert what each does: on the supported (current) build a
// method a route does not take is answered 405 with Allow and a method that is not an RFC 9110
// token 501; on the 20.30 fallback the parser closes such a connection without an answer. CI runs
// this file on both (COMMONS_EXPECT_UWS names the build an environment must load).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeUwsBuild, FALLBACK_LACKS, uwsBuild } from '../../src/transport/uws-build.js';
import { checkAnswer } from '../helpers/contract-gate.js';
import { countRows } from '../helpers/db.js';
import { rawExchange } from '../helpers/raw.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const current = uwsBuild.kind === 'current';

interface Parsed {
  status: number;
  headers: Map<string, string>;
  body: string;
}

function parse(text: string): Parsed {
  const [head = '', body = ''] = text.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Map<string, string>();
  for (const l of lines) {
    const i = l.indexOf(':');
    headers.set(l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim());
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** Sends one request with `method` exactly as given; the connection is asked to close after it. */
async function send(method: string, path: string, body = ''): Promise<{ ended: boolean; answer: Parsed | null }> {
  const extra = body ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : '';
  const { text, ended } = await rawExchange(
    s.app.port,
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
  return { ended, answer: text === '' ? null : parse(text) };
}

/** On the fallback: the connection is ended by the server and nothing was answered. */
async function expectClosedUnanswered(method: string, path: string): Promise<void> {
  const r = await send(method, path);
  expect(r.answer).toBeNull();
  expect(r.ended).toBe(true);
}

/** On the current build: `status` with the error envelope's `code`, checked by the contract gate
 * (methods the gate can name as sent: it upper-cases what it is given). */
async function expectAnswer(method: string, path: string, status: number, code: string, allow?: string): Promise<Parsed> {
  const r = await send(method, path);
  const a = r.answer as Parsed;
  expect(a?.status).toBe(status);
  if (allow !== undefined) expect(a.headers.get('allow')).toBe(allow);
  const json = JSON.parse(a.body);
  if (path === '/mcp' || path === '/a2a') expect(json.error.code).toBeTypeOf('number');
  else expect(json).toMatchObject({ success: false, error: { code } });
  if (method === method.toUpperCase()) expect(checkAnswer(method, path, status, a.headers.get('content-type') ?? '', a.body)).toEqual([]);
  return a;
}

describe('the uWS build', () => {
  it('is the one this environment must load, and the startup line names it (and what the fallback lacks)', () => {
    const want = process.env.COMMONS_EXPECT_UWS;
    if (want !== undefined) expect(uwsBuild.kind).toBe(want);
    if (current) {
      expect(uwsBuild.version).toMatch(/^20\.(5[7-9]|[6-9]\d)\./);
      expect(describeUwsBuild()).toMatch(/^runtime: Node v\d+\.\d+\.\d+, uWebSockets\.js 20\.\d+\.\d+ \(the supported build\)$/);
    } else {
      expect(uwsBuild.version).toBe('20.30.0-unofficial.0');
      expect(uwsBuild.reason).toBeTruthy();
      expect(describeUwsBuild()).toContain(`FALLBACK build: the current build did not load: ${uwsBuild.reason}`);
      expect(describeUwsBuild()).toContain(`it lacks: ${FALLBACK_LACKS}`);
    }
  });

  it('answers a standard method as before (the raw requests below reach the service)', async () => {
    const r = await send('GET', '/api/v1/constitution');
    expect(r.answer?.status).toBe(200);
  });
});

describe('a method the route does not take: 405 with Allow on the current build', () => {
  it('PROPFIND', async () => {
    if (!current) return expectClosedUnanswered('PROPFIND', '/api/v1/ai/register');
    await expectAnswer('PROPFIND', '/api/v1/ai/register', 405, 'METHOD_NOT_ALLOWED', 'POST');
  });

  it('FOO', async () => {
    if (!current) return expectClosedUnanswered('FOO', '/api/v1/constitution');
    const a = await expectAnswer('FOO', '/api/v1/constitution', 405, 'METHOD_NOT_ALLOWED');
    expect(a.headers.get('allow')?.split(', ')).toContain('GET');
  });

  it('lowercase get (methods are case-sensitive)', async () => {
    if (!current) return expectClosedUnanswered('get', '/api/v1/constitution');
    const a = await expectAnswer('get', '/api/v1/constitution', 405, 'METHOD_NOT_ALLOWED');
    expect(a.headers.get('allow')?.split(', ')).toContain('GET');
  });

  it('lowercase post writes nothing', async () => {
    const before = await countRows(s, 'chat_messages');
    const r = await send('post', '/api/v1/chat', JSON.stringify({ body: 'lowercase post' }));
    if (current) {
      expect(r.answer?.status).toBe(405);
      expect(r.answer?.headers.get('allow')?.split(', ')).toContain('POST');
      expect(JSON.parse(r.answer?.body ?? '')).toMatchObject({ success: false, error: { code: 'METHOD_NOT_ALLOWED' } });
    } else {
      expect(r.answer).toBeNull();
      expect(r.ended).toBe(true);
    }
    expect(await countRows(s, 'chat_messages')).toBe(before);
  });

  it('on the protocol endpoints too: lowercase post on /a2a, PROPFIND and lowercase get on /mcp', async () => {
    if (!current) {
      await expectClosedUnanswered('post', '/a2a');
      await expectClosedUnanswered('PROPFIND', '/mcp');
      return expectClosedUnanswered('get', '/mcp');
    }
    await expectAnswer('post', '/a2a', 405, '', 'POST');
    await expectAnswer('PROPFIND', '/mcp', 405, '', 'POST, OPTIONS');
    await expectAnswer('get', '/mcp', 405, '', 'POST, OPTIONS');
    await expectAnswer('TRACE', '/a2a', 405, '', 'POST');
  });
});

describe('a method that is not HTTP (not an RFC 9110 token): 501 on the current build, connection closed', () => {
  for (const method of ['G(T', 'A/B', 'X[Y]', 'GE"T']) {
    it(`${method} on the API and on /mcp`, async () => {
      if (!current) {
        await expectClosedUnanswered(method, '/api/v1/constitution');
        return expectClosedUnanswered(method, '/mcp');
      }
      await expectAnswer(method, '/api/v1/constitution', 501, 'NOT_IMPLEMENTED');
      const r = await send(method, '/api/v1/constitution');
      expect(r.answer?.headers.get('connection')).toBe('close');
      expect(r.ended).toBe(true);
      await expectAnswer(method, '/mcp', 501, '');
    });
  }
});
