// Shared by scripts/build.mjs (which loads these with require) and scripts/check-deploy.ts (which
// refuses a dist/ that imports one as an ES module).

/** The built-ins whose ES module view loads more than `require` does (Node 24.21, every built-in
 * imported alone in a fresh process, `process.moduleLoadList` counted): Node 22+ builds that view
 * by reading every export, and some exports are getters that load a subsystem on first read.
 * `import http from 'node:http'` loads undici, HTTP/2, web streams and readline for
 * `http.WebSocket` and its kin (72 internal modules; 13 MB resident alone, 4-5 MB of a server at
 * rest); `node:fs` 31 (readline, for `fs.promises`), `node:util` 31, `node:process` 42. Node 20's
 * views read none of those. */
export const ESM_VIEW_LOADS = ['fs', 'http', 'process', 'util'];
