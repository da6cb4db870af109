// The deployment files cannot rot (docs/operations.md "Container"), the release-sized half
// (deploy.test.ts lints the files). No container engine runs here, so the Dockerfile's stages
// are played as plain processes: each stage is a directory, COPY copies from this checkout or
// from an earlier stage, and the exact RUN command lines that build the application run in it
// (the root-only image chores, apt-get and chown of /data, do not). The runtime stage's CMD then starts the server with the image's ENV and the
// compose nodes' settings, the HEALTHCHECK and compose health-check commands answer 0, SIGTERM
// stops it with exit code 0, and the health check then fails.

import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import yaml from 'js-yaml';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDistGuard, stages } from '../../scripts/check-deploy.js';
import { listening, run, runToEnd } from '../helpers/process.js';

const root = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const composeText = readFileSync(join(root, 'compose.yaml'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'commons-image-'));
const schema = `t_${randomBytes(6).toString('hex')}`;

afterAll(async () => {
  if (process.env.DATABASE_URL) {
    const sql = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  }
  rmSync(work, { recursive: true, force: true });
  // Two stages' node_modules (each with both uWS builds' binaries, about 230 MB) take a while to
  // remove on a loaded machine.
}, 300_000);

/** Plays the Dockerfile's stages in directories under `work`; answers the runtime stage's state. */
async function build(): Promise<{ dir: string; env: Record<string, string>; cmd: string[]; health: string[] }> {
  const dirs = new Map<string, string>();
  let dir = '';
  let env: Record<string, string> = {};
  const last = stages(dockerfile).length - 1;
  for (const [n, stage] of stages(dockerfile).entries()) {
    const name = /\bAS\s+(\S+)/i.exec(stage[0]?.args ?? '')?.[1] ?? String(n);
    dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    dirs.set(name, dir);
    env = {};
    for (const { keyword, args } of stage.slice(1)) {
      if (keyword === 'ENV') for (const m of args.matchAll(/(\w+)=(\S+)/g)) env[m[1] as string] = m[2] as string;
      if (keyword === 'COPY') {
        const from = /--from=(\S+)/.exec(args)?.[1];
        const parts = args.replace(/--\S+/g, '').trim().split(/\s+/);
        const dest = parts.pop() as string;
        for (const src of parts) {
          const origin = from ? join(dirs.get(from) as string, src.replace(/^\/app\/?/, '')) : join(root, src);
          // Docker's rule: into the directory when the destination ends with / or there are several sources.
          const into = dest.endsWith('/') || parts.length > 1;
          const target = into ? join(dir, dest, src.split('/').pop() as string) : join(dir, dest);
          mkdirSync(dirname(target), { recursive: true });
          cpSync(origin, target, { recursive: true });
        }
      }
      if (keyword === 'RUN' && args.trim().startsWith('npm ')) {
        const r = await runToEnd('sh', ['-c', args], { cwd: dir });
        expect(r.code, `${args}\n${r.output}`).toBe(0);
      }
    }
    if (n === last) {
      const cmd = JSON.parse(stage.find((i) => i.keyword === 'CMD')?.args ?? '[]') as string[];
      const hc = stage.find((i) => i.keyword === 'HEALTHCHECK')?.args ?? '';
      const health = JSON.parse(hc.slice(hc.indexOf('CMD') + 3).trim()) as string[];
      return { dir, env, cmd, health };
    }
  }
  throw new Error('no stages');
}

describe('the image, played as plain processes', () => {
  it('builds, starts, answers its health checks, and stops on SIGTERM with exit 0', { timeout: 600_000 }, async () => {
    const image = await build();
    // The image's bundle carries the postgres.js guard (the build stage applied it).
    expect(checkDistGuard(join(image.dir, 'dist'))).toEqual([]);
    expect(image.cmd).toEqual(['node', '--liftoff-only', '--max-semi-space-size=4', 'dist/main.js']);
    // ... with the environment and flags `npm start` gives it (package.json "start"): one command line.
    expect(image.env.MALLOC_ARENA_MAX).toBe('1');
    const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    expect(start).toBe(`exec env MALLOC_ARENA_MAX=${image.env.MALLOC_ARENA_MAX} ${image.cmd.join(' ')}`);
    const compose = yaml.load(composeText) as {
      services: Record<string, { environment: Record<string, string>; healthcheck: { test: string[] } }>;
    };
    const node = compose.services.node1 as (typeof compose.services)[string];
    // The compose node's settings, with its service hostnames replaced by this machine's servers.
    const real: Record<string, string> = process.env.DATABASE_URL
      ? { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema, REDIS_URL: process.env.REDIS_URL ?? '' }
      : {};
    const env: Record<string, string> = {
      ...image.env,
      TRUST_PROXY: node.environment.TRUST_PROXY as string,
      LOG_LEVEL: node.environment.LOG_LEVEL as string,
      ...real,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: join(work, 'data'),
      REDIS_PREFIX: `t${randomBytes(6).toString('hex')}:`,
    };
    const server = run(image.cmd[0] as string, image.cmd.slice(1), { cwd: image.dir, env });
    try {
      const url = await listening(server);
      const port = new URL(url).port;
      const [bin, ...args] = image.health;
      const viaImage = await runToEnd(bin as string, args, { cwd: image.dir, env: { PORT: port } });
      expect(viaImage.code, viaImage.output).toBe(0);
      const [kind, cbin, ...cargs] = node.healthcheck.test;
      expect(kind).toBe('CMD');
      expect((await runToEnd(cbin as string, cargs, { cwd: image.dir, env: { PORT: port } })).code).toBe(0);
      // The page and its assets come from files the image must carry (public/), found from dist/.
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      const asset = /\/assets\/page\.[0-9a-f]+\.css/.exec(await page.text())?.[0];
      expect(asset).toBeDefined();
      expect((await fetch(`${url}${asset}`)).status).toBe(200);

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      expect(server.output()).toContain('"msg":"stopped"');
      // One startup line names the runtime and uWS build (on an old-glibc host: the fallback).
      expect(server.output()).toMatch(/"msg":"runtime: Node v\d+\.\d+\.\d+, uWebSockets\.js 20\.\d+/);
      expect((await runToEnd(bin as string, args, { cwd: image.dir, env: { PORT: port } })).code).toBe(1);
    } finally {
      server.child.kill('SIGKILL');
    }
  });
});
