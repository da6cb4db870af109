// The protocol endpoints served beside the router (mounted on uWS by src/transport/mcp and
// src/transport/a2a), described here, in one place, for the OpenAPI document. The documents test
// checks both directions: every router route and every entry here is documented, and nothing else.
import { A2A_PATH, MCP_PATH } from '../paths.js';
import { SKILLS } from './agent-card.js';

type Json = Record<string, unknown>;

const JsonRpcRequest: Json = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer', 'null'] },
    method: { type: 'string' },
    params: { type: 'object' },
  },
};

/** MCP's JSON-RPC: a request's id is never null (MCP "Messages": unlike base JSON-RPC); the SDK
 * refuses one with 400 and -32700 before it reads the method. */
const McpRequest: Json = {
  ...JsonRpcRequest,
  properties: { ...(JsonRpcRequest.properties as Json), id: { type: ['string', 'integer'], description: 'never null in MCP' } },
};

const JsonRpcResponse: Json = {
  type: 'object',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer', 'null'] },
    result: {},
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
  },
};

const rpcAnswer = (description: string) => ({ description, content: { 'application/json': { schema: JsonRpcResponse } } });
/** method.ts: a method that is not an RFC 9110 token (the supported uWS build; the fallback closes). */
const NOT_HTTP = 'the method is not an HTTP method (not an RFC 9110 token); the connection is closed';

const common = {
  security: [{}, { bearerAuth: [] }, { guestToken: [] }],
  parameters: [
    {
      name: 'X-Commons-Guest-Token',
      in: 'header',
      required: false,
      description: 'guest token (alternative to Authorization: Bearer cmg_...)',
      schema: { type: 'string' },
    },
  ],
  requestBody: { required: true, content: { 'application/json': { schema: JsonRpcRequest } } },
};

export interface ProtocolOp {
  method: 'POST';
  path: string;
  operation: Json;
}

export const PROTOCOL_OPS: ProtocolOp[] = [
  {
    method: 'POST',
    path: MCP_PATH,
    operation: {
      operationId: 'postMcp',
      summary: 'MCP (Streamable HTTP, stateless, JSON answers); tools act as the identity whose token is sent',
      description:
        'MCP over Streamable HTTP, stateless, with JSON answers. tools/list names every tool with its input and output ' +
        "schemas (discovery's protocols.mcp.tools lists the names). " +
        'Tools act as the identity whose token is sent (Authorization: Bearer); without one, a guest.',
      tags: ['protocols'],
      ...common,
      requestBody: { required: true, content: { 'application/json': { schema: McpRequest } } },
      parameters: [
        ...common.parameters,
        {
          name: 'Origin',
          in: 'header',
          required: false,
          description: 'refused unless it is this service or localhost',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': {
          description: 'a JSON-RPC answer (tool failures are results with isError true)',
          content: {
            'application/json': { schema: JsonRpcResponse },
            // Streamable HTTP's other answer type: this server answers JSON, but a client must
            // accept both (else 406), so a client generated from this document asks for both.
            'text/event-stream': { schema: { type: 'string', description: 'never sent here: answers are JSON' } },
          },
        },
        '202': { description: 'a notification was accepted' },
        '400': rpcAnswer('not a JSON-RPC message MCP takes (not JSON, or a request with a null id): -32700'),
        '403': rpcAnswer('the Origin is neither this service nor localhost (DNS-rebinding protection)'),
        '405': rpcAnswer('GET, DELETE and any other method but POST and OPTIONS: the endpoint is stateless'),
        '406': rpcAnswer('Accept must list application/json and text/event-stream'),
        '413': rpcAnswer('bodies are at most 64 KiB'),
        '501': rpcAnswer(NOT_HTTP),
      },
    },
  },
  {
    method: 'POST',
    path: A2A_PATH,
    operation: {
      operationId: 'postA2a',
      summary: 'A2A JSON-RPC: SendMessage (protocol 1.0) and message/send (0.3)',
      description:
        `A2A JSON-RPC: SendMessage (protocol 1.0, header A2A-Version: 1.0) and message/send (0.3) for the skills ${SKILLS.map((k) => k.id).join(', ')}; ` +
        'the agent card is at /.well-known/agent-card.json.',
      tags: ['protocols'],
      ...common,
      parameters: [
        ...common.parameters,
        {
          name: 'A2A-Version',
          in: 'header',
          required: false,
          description:
            '1.0, or absent / 0.3 for 0.3 clients; a patch version after them is ignored (1.0.0); any other answers JSON-RPC -32009',
          // As src/transport/a2a/endpoint.ts reads it: trimmed, the first two dot-separated parts.
          schema: { type: 'string', pattern: '^\\s*(1\\.0|0\\.3)(\\..*)?\\s*$' },
        },
      ],
      responses: {
        '200': rpcAnswer('a JSON-RPC answer: an agent message whose data part is the skill data or {error}'),
        '405': rpcAnswer('only POST'),
        '413': rpcAnswer('bodies are at most 64 KiB'),
        '501': rpcAnswer(NOT_HTTP),
      },
    },
  },
];
