// Request ids: a random UUID (src/domain/uuid.ts), written as bytes into the lean read path's
// preformatted headers (src/transport/http/fast-read.ts), or as a string by the general pipeline.
export { UUID_CHARS as REQUEST_ID_CHARS, uuid as requestId, uuidInto as requestIdInto } from '../../domain/uuid.js';
