// The MCP Inspector's CLI (@modelcontextprotocol/inspector, a client written by others) lists the
// tools of the started service and lints their schemas for portability (DECISIONS.md "Contract
// exactness"): with --strict it prints every finding, so a clean run prints nothing on stderr.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TOOLS } from '../../src/transport/mcp/tools.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const require = createRequire(import.meta.url);
const LAUNCHER = join(dirname(require.resolve('@modelcontextprotocol/inspector/package.json')), 'clients/launcher/build/index.js');

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

it('tools/list through the inspector CLI: every tool, zero portability warnings', async () => {
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [LAUNCHER, '--cli', `${s.url}/mcp`, '--transport', 'http', '--method', 'tools/list', '--strict'],
      { timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).not.toMatch(/Warning|Error|portability/);
  expect(r.stderr.trim()).toBe('');
  const listed = JSON.parse(r.stdout) as { tools: { name: string }[] };
  expect(listed.tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
}, 90_000);
