// A request and its answer as the HTTP pipeline sees them, independent of the socket library.
import type { Credential } from '../admission/credential.js';

export interface RawRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: Buffer | null;
  ip: string;
  /** The request's credential, when the lean read path read it already (credential.ts). */
  credential?: Credential | undefined;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
  /** When set, written after the headers chunk by chunk instead of `body` (src/transport/http/uws.ts). */
  stream?: AsyncIterable<string>;
}
