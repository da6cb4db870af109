// The deployment files cannot rot (docs/operations.md "Container"), the quick half: compose.yaml
// is validated against the Compose Specification schema and the Dockerfile linted
// (scripts/check-deploy.ts, also in `npm run check`), both checks shown to fail on broken files,
// and the built dist/ carries the postgres.js guard. deploy-image.test.ts (the release group)
// plays the Dockerfile's stages as plain processes.

import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCompose, checkDistBuiltins, checkDistGuard, lintDockerfile } from '../../scripts/check-deploy.js';

const root = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const composeText = readFileSync(join(root, 'compose.yaml'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'commons-deploy-files-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('deployment files parse and lint', () => {
  it('accepts the files in the repository', () => {
    expect(checkCompose(composeText)).toEqual([]);
    expect(lintDockerfile(dockerfile)).toEqual([]);
  });

  it('refuses broken ones', () => {
    expect(checkCompose('services:\n  node1:\n    image: 5\n    ports: 8080\n').join('\n')).toMatch(/compose: \/services\/node1/);
    expect(checkCompose(composeText.replace('TRUST_PROXY: "1"', 'TRUSTED: "1"'))).toContain('compose: node1 sets no TRUST_PROXY');
    expect(lintDockerfile(dockerfile.replace('USER node', 'USER root'))).toContain(
      'Dockerfile: the runtime stage must run as a non-root USER',
    );
    expect(lintDockerfile(dockerfile.replace(/^CMD \[.*\]$/m, 'CMD node dist/main.js'))).toContain(
      'Dockerfile: CMD in exec form, so SIGTERM reaches node',
    );
    expect(lintDockerfile(`${dockerfile}\nFROOM x\n`).join('\n')).toMatch(/Dockerfile:\d+: /);
    expect(lintDockerfile(dockerfile.replace(' && node scripts/patch-postgres.mjs', ''))).toContain(
      'Dockerfile: the build stage must run `node scripts/patch-postgres.mjs` after `npm ci` and before `npm run build`',
    );
    expect(lintDockerfile(dockerfile.replaceAll('node:24.21.0-trixie-slim', 'node:20.20.2-bookworm-slim')).join('\n')).toContain(
      'node:20.20.2-bookworm-slim AS build is not the supported runtime',
    );
  });

  it('refuses a dist/ whose bundled postgres.js lacks the guard, and a missing dist/', () => {
    const dist = join(root, 'dist');
    expect(checkDistGuard(dist)).toEqual([]);
    const copy = join(work, 'unguarded-dist');
    cpSync(dist, copy, { recursive: true });
    let undone = 0;
    for (const f of readdirSync(copy).filter((n) => n.endsWith('.js'))) {
      const text = readFileSync(join(copy, f), 'utf8');
      const plain = text.replace(/(function nextWrite\(fn\) \{)\s*if \(!socket\) \{[^}]*\}/, '$1');
      if (plain !== text) undone++;
      writeFileSync(join(copy, f), plain);
    }
    expect(undone).toBe(1);
    expect(checkDistGuard(copy).join('\n')).toMatch(/the bundled postgres\.js lacks the nextWrite guard/);
    expect(checkDistGuard(join(work, 'nowhere'))[0]).toMatch(/missing; run `npm run build`/);
  });

  it("refuses a dist/ that imports a built-in as an ES module (Node 24 loads undici for node:http's ES view)", () => {
    const dist = join(root, 'dist');
    expect(checkDistBuiltins(dist)).toEqual([]);
    const copy = join(work, 'esm-builtins-dist');
    cpSync(dist, copy, { recursive: true });
    const main = join(copy, 'main.js');
    writeFileSync(main, `import http from "node:http";\nimport { readFileSync } from "fs";\n${readFileSync(main, 'utf8')}`);
    expect(checkDistBuiltins(copy)).toEqual([
      `${copy}/main.js: imports node:http as an ES module (scripts/build.mjs's builtins-required plugin did not run)`,
      `${copy}/main.js: imports fs as an ES module (scripts/build.mjs's builtins-required plugin did not run)`,
    ]);
  });
});
