// @modelcontextprotocol/conformance 0.1.16 imports fs.globSync (Node 22) at load time, for its
// tier-check command only. On Node 20 the whole CLI would fail to load, so this loader hook gives
// that package (and nothing else) an fs module with a globSync that throws if it is ever called.
import { register } from 'node:module';

const hook = `
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    const src = "import * as fs from 'node:fs'; export * from 'node:fs'; export default fs; " +
      "export function globSync() { throw new Error('fs.globSync needs Node 22'); }";
    return { url: 'data:text/javascript,' + encodeURIComponent(src), shortCircuit: true };
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
