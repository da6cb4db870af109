// Headers every answer carries, whoever writes it (the HTTP pipeline, the lean read path, the
// tool protocols, the stream's and the relay's refused upgrades): docs/security.md "Browsers and
// headers". `X-Content-Type-Options: nosniff` always, so no browser reads a JSON or text answer
// as a script or a page; `Strict-Transport-Security` when PUBLIC_URL is https, so a browser that
// once reached the service over TLS never falls back to plain HTTP for a year.
import type { HttpResponse } from 'uWebSockets.js';
import type { Config } from '../../config.js';
import { CommonsError } from '../../domain/errors.js';
import { errorBody, STATUS_OF, statusLine } from './envelope.js';

/** One year, the common preload-ready value; no includeSubDomains: the service owns one origin. */
export const HSTS = 'max-age=31536000';

/** Name, value pairs written after every status line. */
export type AnswerHead = readonly string[];

export function answerHead(config: Pick<Config, 'publicUrl'>): AnswerHead {
  const https = config.publicUrl?.toLowerCase().startsWith('https://') === true;
  return ['x-content-type-options', 'nosniff', ...(https ? ['strict-transport-security', HSTS] : [])];
}

/** Writes the status line and the headers every answer carries; returns `res` for more headers. */
export function writeHead(res: HttpResponse, status: number, head: AnswerHead): HttpResponse {
  res.writeStatus(statusLine(status));
  for (let i = 0; i < head.length; i += 2) res.writeHeader(head[i] as string, head[i + 1] as string);
  return res;
}

/** A WebSocket upgrade refused for its Origin (the stream and the relay): 403 FORBIDDEN, before
 * any upgrade, credential lookup or per-address count. */
export function refuseOrigin(res: HttpResponse, head: AnswerHead, origin: string | undefined): void {
  const err = new CommonsError('FORBIDDEN', `Origin ${String(origin).slice(0, 200)} may not open this endpoint (STREAM_ALLOWED_ORIGINS)`);
  res.cork(() => {
    writeHead(res, STATUS_OF.FORBIDDEN, head).writeHeader('content-type', 'application/json; charset=utf-8');
    res.end(errorBody(err, ''));
  });
}
