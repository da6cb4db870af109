// A refused upgrade, answered as HTTP in the envelope's error shape (the stream's own error writer:
// per-address count, shutdown, a refused credential, the deadline).
import type { HttpResponse } from 'uWebSockets.js';
import type { CommonsError } from '../../domain/errors.js';
import type { AnswerHead } from '../edge/head.js';
import { writeHead } from '../edge/io.js';
import { errorBody, STATUS_OF } from '../runner/envelope.js';

export function refuseUpgrade(res: HttpResponse, head: AnswerHead, e: CommonsError): void {
  res.cork(() => {
    writeHead(res, STATUS_OF[e.code], head).writeHeader('content-type', 'application/json; charset=utf-8');
    if (e.retryAfterS !== undefined) res.writeHeader('retry-after', String(e.retryAfterS));
    res.end(errorBody(e, ''));
  });
}
