// `npm run check`: writes the OpenAPI document the service serves (built from the route list) and
// lints it with Redocly's recommended rules (redocly.yaml) and Spectral's `oas` ruleset
// (.spectral.yaml; any warning fails), so the published contract stays valid for generated clients
// and SDKs and strangers' linters say nothing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApi } from '../src/transport/documents/openapi.js';
import { allRoutes } from '../src/transport/all-routes.js';

const dir = mkdtempSync(join(tmpdir(), 'commons-openapi-'));
const file = join(dir, 'openapi.json');
writeFileSync(file, JSON.stringify(buildOpenApi(allRoutes(), 'https://commons.example')));
const redocly = spawnSync('npx', ['redocly', 'lint', '--config', 'redocly.yaml', file], { stdio: 'inherit' });
const spectral = spawnSync('npx', ['spectral', 'lint', '--ruleset', '.spectral.yaml', '--fail-severity', 'warn', file], {
  stdio: 'inherit',
});
rmSync(dir, { recursive: true, force: true });
process.exit((redocly.status ?? 1) || (spectral.status ?? 1));
