// Headers every answer carries, whoever writes it (the HTTP pipeline, the lean read path, the
// tool protocols, the stream's and the relay's refused upgrades; writeHead in io.ts writes them):
// docs/security.md "Browsers and headers". `X-Content-Type-Options: nosniff` always, so no browser
// reads a JSON or text answer as a script or a page; `Strict-Transport-Security` when PUBLIC_URL is
// https, so a browser that once reached the service over TLS never falls back to plain HTTP.
import type { Config } from '../../config.js';

/** One year; no includeSubDomains (the service owns one origin, not its parent domain). */
export const HSTS = 'max-age=31536000';

/** Name, value pairs written after every status line. */
export type AnswerHead = readonly string[];

export function answerHead(config: Pick<Config, 'publicUrl'>): AnswerHead {
  const https = config.publicUrl?.toLowerCase().startsWith('https://') === true;
  return ['x-content-type-options', 'nosniff', ...(https ? ['strict-transport-security', HSTS] : [])];
}

/**
 * A status and headers preformatted as uWS writes them after `HTTP/1.1 `: the status text, then
 * each `name: value` on a line of its own (uWS ends the last line). The lean read path writes its
 * constant headers this way, in one native call instead of one per header
 * (src/transport/http/uws.ts `writeLean`). Only for values fixed in code or made by the service
 * (an ETag, a guest token): a line break in one would split it into two headers, so none is taken.
 */
export function preformatted(status: string, pairs: readonly string[]): Buffer {
  let text = status;
  for (let i = 0; i < pairs.length; i += 2) text += `\r\n${pairs[i]}: ${pairs[i + 1]}`;
  if (/[\r\n]/.test(status + pairs.join(''))) throw new Error('a preformatted header holds a line break');
  // Its own memory, not a slice of node's shared pool: one kept for long (a guest's, up to a
  // window) would hold a whole 8 KiB pool alive.
  const out = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'latin1'));
  out.write(text, 'latin1');
  return out;
}
