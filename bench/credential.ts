// The credential's own work per request, in process (docs/architecture.md "One way in"):
// `node --import tsx bench/credential.ts`. "before" models the way in before the one credential
// (issue 35): the lean read path's bearer parse and one-shot digest, and a member's chat post
// reading its bearer four times and digesting its token four times (limits, token cache, the
// statement's hash, the known record). "now" is src/transport/admission/credential.ts doing what those
// steps take from it. Rounds alternate; each prints nanoseconds per request.
import { createHash, hash, randomBytes } from 'node:crypto';
import { credentialOf } from '../src/transport/admission/credential.js';

const token = `cmn_${randomBytes(32).toString('base64url')}`;
const headers: Record<string, string> = { authorization: `Bearer ${token}`, host: 'x', accept: '*/*' };
const BEARER = /^Bearer\s+(\S+)\s*$/i;
const bearerOf = (h: Record<string, string>) => (h.authorization ? (BEARER.exec(h.authorization)?.[1] ?? null) : null);
const digest = (t: string) => createHash('sha256').update(t, 'utf8').digest();
const N = 1_000_000;
let sink = 0;

const cases: [string, () => void][] = [
  [
    'lean read, before',
    () => {
      const b = bearerOf(headers);
      const t = b ?? headers['x-commons-guest-token'] ?? null;
      if (t?.startsWith('cmn_')) sink += hash('sha256', t, 'base64').length;
    },
  ],
  [
    'lean read, now',
    () => {
      const c = credentialOf(headers);
      if (c.kind === 'member') sink += (c.digest as string).length;
    },
  ],
  [
    'member chat post, before',
    () => {
      for (let i = 0; i < 4; i++) bearerOf(headers);
      sink += digest(token).toString('base64url').slice(0, 22).length + digest(token).toString('base64').length;
      sink += digest(token).length + digest(token).toString('base64url').slice(0, 22).length;
    },
  ],
  [
    'member chat post, now',
    () => {
      const c = credentialOf(headers);
      sink += (c.key as string).length + (c.digest as string).length + (c.hash as Buffer).length;
    },
  ],
];

for (let round = 0; round < 2; round++) {
  for (const [name, f] of cases) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < N; i++) f();
    console.log(`${name}: ${(Number(process.hrtime.bigint() - t) / N).toFixed(0)} ns/request`);
  }
}
if (sink === 0) console.log('nothing measured');
