// The one place that picks the uWebSockets.js build (DECISIONS.md "Runtime"); everything else
// imports the module from here, and only types from 'uWebSockets.js'.
// - The supported build is the current one (the `uWebSockets.js` dependency, 20.57+): binaries for
//   the Node 20, 22, 24 and 25 ABIs that need glibc 2.38 or later (Debian 13, Ubuntu 24.04, the
//   node:24-trixie-slim image).
// - On an older glibc (Debian 12) it cannot load, and the 20.30 build (`uws-fallback`, binaries for
//   Node 16/18/20 only) is used instead. Its binary is loaded by path: the package's own entry would
//   quietly swap in a slow pure-JS stand-in when no binary fits the running Node.
// The choice is made once, when this module is first imported, and named in one startup log line
// (`describeUwsBuild`, logged by app.ts).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

type Uws = typeof import('uWebSockets.js');

export interface UwsBuild {
  kind: 'current' | 'fallback';
  version: string;
  /** Why the current build did not load (fallback only): the first line of its error. */
  reason?: string;
  /** What the fallback cannot do that the supported runtime does. */
  lacks?: string;
}

const load = createRequire(import.meta.url);
const lastLine = (e: unknown): string =>
  String(e instanceof Error ? e.message : e)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .slice(-1)[0] ?? 'unknown error';
const versionBeside = (file: string): string =>
  (JSON.parse(readFileSync(join(dirname(file), 'package.json'), 'utf8')) as { version: string }).version;

/** The header block uWS itself buffers before our code sees a request: twice our own limit
 * (src/transport/http/uws.ts MAX_HEADER_BYTES, 8 KiB), so a block between the two is answered by
 * our JSON 431 on both builds; only a block over this is refused by uWS's own small 431 page.
 * The 20.57 build's default is 4 KiB, which made an ordinary 5 KB bearer a bare-text 431. It is
 * read once, when the native module loads, from the environment (an operator's own value wins). */
export const UWS_HEADER_BUFFER = 16 * 1024;
if (!process.env.UWS_HTTP_MAX_HEADERS_SIZE) process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(UWS_HEADER_BUFFER);

export const FALLBACK_LACKS = 'unknown HTTP methods (PROPFIND, FOO, lowercase get) are closed by its parser instead of answered 405/501';

function pick(): { uWS: Uws; build: UwsBuild } {
  let current: unknown;
  try {
    const uWS = load('uWebSockets.js') as Uws;
    return { uWS, build: { kind: 'current', version: versionBeside(load.resolve('uWebSockets.js')) } };
  } catch (e) {
    current = e;
  }
  const pkg = load.resolve('uws-fallback/package.json');
  const binary = join(dirname(pkg), 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  try {
    const uWS = load(binary) as Uws;
    return { uWS, build: { kind: 'fallback', version: versionBeside(pkg), reason: lastLine(current), lacks: FALLBACK_LACKS } };
  } catch (e) {
    throw new Error(
      `no uWebSockets.js build loads on Node ${process.version} (${process.platform}-${process.arch}): ` +
        `the current build (Node 20/22/24/25, glibc 2.38+): ${lastLine(current)}; ` +
        `the fallback 20.30 build (Node 16/18/20 only): ${lastLine(e)}. Run Node 24 on a glibc 2.38+ host, or Node 20 (README "Runtime")`,
    );
  }
}

const picked = pick();
export const uWS: Uws = picked.uWS;
export const uwsBuild: Readonly<UwsBuild> = picked.build;

/** The startup log line naming the runtime (and, on the fallback, what it lacks). */
export function describeUwsBuild(b: UwsBuild = uwsBuild): string {
  const base = `runtime: Node ${process.version}, uWebSockets.js ${b.version}`;
  if (b.kind === 'current') return `${base} (the supported build)`;
  return `${base} (FALLBACK build: the current build did not load: ${b.reason}); it lacks: ${b.lacks}`;
}
