// The stream's machine-readable description (AsyncAPI 3.0, served at /api/asyncapi.json),
// generated from the same zod schemas the stream validates client ops with and builds its frames
// from (./frames.ts), so the document cannot drift from the wire.
import { z } from 'zod';
import { SESSIONS_PER_ADDRESS } from '../admission/limits/sessions-per-address.js';
import { STREAM_PATH } from '../paths.js';
import { CLOSE_CODES, ClientOp, JSON_PROTOCOL, MAX_BACKPRESSURE_BYTES, MAX_FRAME_BYTES, MSGPACK_PROTOCOL, ServerFrame } from './frames.js';
import { TOPIC_PAYLOADS } from './payloads.js';
import { MEMBER_TOPICS, TOPICS } from './topics.js';

type Json = Record<string, unknown>;

const schema = (s: z.ZodType, io: 'input' | 'output'): Json => {
  const { $schema: _, ...rest } = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-7' }) as Json;
  return rest;
};

/** A server frame's schema; the event frame's union is a `oneOf` (its branches exclude each
 * other: each names its topic, and only the too-large stand-in has data null). */
function frameSchema(name: string, s: z.ZodType): Json {
  const out = schema(s, 'output');
  if (name !== 'event' || !Array.isArray(out.anyOf)) return out;
  const { anyOf, ...rest } = out;
  return { ...rest, oneOf: (anyOf as Json[]).map((b, i) => ({ title: TOPICS[i] ? `event on ${TOPICS[i]}` : 'event too large', ...b })) };
}

/** What the upgrade answers instead of 101, in the REST error envelope (/api/openapi.json
 * components.schemas.ErrorEnvelope). */
export const UPGRADE_REFUSALS: Record<string, string> = {
  '401':
    'UNAUTHORIZED: the credential sent with the upgrade (Authorization: Bearer, X-Commons-Guest-Token) is unknown, revoked or malformed; connect without it to watch as a guest',
  '426': 'UPGRADE_REQUIRED: a plain GET without Upgrade: websocket',
  '429': `RATE_LIMITED: more than ${SESSIONS_PER_ADDRESS} open sessions from one address (Retry-After)`,
  '503': 'UNAVAILABLE: the node is shutting down; connect again (another node answers)',
};

const TOPIC_TEXT: Record<(typeof TOPICS)[number], string> = {
  chat: 'the open chat; event id = the message seq; since replays missed messages',
  presence: 'residents going online and offline',
  signal: 'recruitment signal emissions; event id = the emission seq; since replays',
  replies: 'replies to the signal',
  posts: 'workroom posts',
  treasury:
    'verified deposits (deposit_verified) and campaigns opened, counting a verified contribution, funded, ended or closed (campaign_*); x-topics.treasury.payload describes the data',
  tasks: 'the task board (members only)',
  workroom: 'workroom entries and proposals (members only)',
  inbox:
    'your own inbox items only (members): mentions, replies, task moves, votes, direct messages, deposits, the moves of your campaigns, badges; event id = the item id (per member); since replays missed items',
};

export function buildAsyncApi(baseUrl: string): Json {
  const url = new URL(baseUrl);
  const messages: Json = {};
  const operations: Json = {};
  for (const option of ClientOp.options) {
    const op = (option.shape.op as z.ZodLiteral<string>).value;
    messages[op] = { name: op, title: `client op ${op}`, payload: schema(option, 'input') };
    operations[`receive_${op}`] = {
      action: 'receive',
      channel: { $ref: '#/channels/stream' },
      summary: `the server accepts ${op}; it answers ack {ref, data} or error {ref, error}`,
      messages: [{ $ref: `#/channels/stream/messages/${op}` }],
    };
  }
  for (const [name, s] of Object.entries(ServerFrame)) {
    messages[`server_${name}`] = { name, title: `server frame ${name}`, payload: frameSchema(name, s) };
    operations[`send_${name}`] = {
      action: 'send',
      channel: { $ref: '#/channels/stream' },
      summary: `the server sends ${name} frames`,
      messages: [{ $ref: `#/channels/stream/messages/server_${name}` }],
    };
  }
  const topics = TOPICS.map((t) => `- ${t}${MEMBER_TOPICS.has(t) ? ' (members)' : ''}: ${TOPIC_TEXT[t]}`).join('\n');
  const closes = Object.entries(CLOSE_CODES)
    .map(([c, why]) => `- ${c}: ${why}`)
    .join('\n');
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Commons real-time stream',
      version: '1.0.0',
      description: [
        `One WebSocket at ${STREAM_PATH}. Frames are JSON text, or MessagePack binary when the client offers the subprotocol ${MSGPACK_PROTOCOL} (${JSON_PROTOCOL} names JSON).`,
        'A credential may come with the upgrade (Authorization: Bearer, or X-Commons-Guest-Token) or later with the auth op; with none the session is a new guest, announced in hello.',
        `The upgrade is refused with an HTTP status and the REST error envelope (${baseUrl}/api/openapi.json#/components/schemas/ErrorEnvelope), never with 101, when:\n${Object.entries(
          UPGRADE_REFUSALS,
        )
          .map(([status, why]) => `- ${status} ${why}`)
          .join('\n')}`,
        'Every client op may carry ref; the answer (ack or error) carries the same ref. Subscribe to a topic, with since = the last event id seen to get what was missed first (no gap, no duplicate).',
        `Limits: client frames at most ${MAX_FRAME_BYTES} bytes; an event larger than that arrives as {data: null, too_large: true} (fetch it over REST); more than ${MAX_BACKPRESSURE_BYTES} bytes waiting for a slow reader closes it with 1013.`,
        `Topics:\n${topics}`,
        `Close codes:\n${closes}`,
        `REST interface: ${baseUrl}/api/openapi.json`,
      ].join('\n\n'),
    },
    defaultContentType: 'application/json',
    servers: {
      commons: {
        host: url.host,
        protocol: url.protocol === 'https:' ? 'wss' : 'ws',
        pathname: STREAM_PATH,
        description: 'the Commons service',
      },
    },
    channels: {
      stream: {
        address: STREAM_PATH,
        title: 'the stream session',
        description: `Upgrade refusals (HTTP status, JSON error envelope): ${Object.entries(UPGRADE_REFUSALS)
          .map(([status, why]) => `${status} ${why}`)
          .join('; ')}.`,
        messages,
        bindings: {
          ws: {
            method: 'GET',
            headers: {
              type: 'object',
              properties: {
                Authorization: { type: 'string', description: 'Bearer cmn_... (member) or cmg_... (guest)' },
                'X-Commons-Guest-Token': { type: 'string' },
                'Sec-WebSocket-Protocol': { type: 'string', enum: [JSON_PROTOCOL, MSGPACK_PROTOCOL] },
              },
            },
          },
        },
      },
    },
    operations,
    'x-topics': Object.fromEntries(
      TOPICS.map((t) => [
        t,
        {
          members_only: MEMBER_TOPICS.has(t),
          description: TOPIC_TEXT[t],
          payload: schema(TOPIC_PAYLOADS[t], 'output'),
        },
      ]),
    ),
    'x-close-codes': CLOSE_CODES,
    'x-upgrade-refusals': UPGRADE_REFUSALS,
  };
}
