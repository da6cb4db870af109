// The fixed paths of the endpoints the protocol folders mount beside the router (MCP, A2A, the
// stream) and of the stream's document, named once here so that the operation table
// (./routes), the documents that describe the service (./documents) and the protocols that
// serve them all read the same string; this module imports nothing.

/** MCP over Streamable HTTP (./mcp/server.ts). */
export const MCP_PATH = '/mcp';
/** A2A JSON-RPC (./a2a/endpoint.ts). */
export const A2A_PATH = '/a2a';
/** The stream's one endpoint (DECISIONS.md "Real-time stream"; ./ws/stream.ts). */
export const STREAM_PATH = '/api/v1/stream';
/** The stream's AsyncAPI document (./ws/asyncapi.ts). */
export const ASYNCAPI_PATH = '/api/asyncapi.json';
/** The read-only Nostr relay (./nostr/relay.ts) and its NIP-11 document: NDK always dials the
 * relay with a trailing slash, so both spellings answer the same. */
export const NOSTR_PATH = '/nostr';
export const NOSTR_PATHS = [NOSTR_PATH, `${NOSTR_PATH}/`] as const;
