// OpenAPI 3.1 generated from the routes and the zod schemas that validate them (DECISIONS.md
// "Tool protocols"): every operation the router knows is described, and nothing else.
import { z } from 'zod';
import type { ErrorCode } from '../../domain/errors.js';
import { KEY_MIN_SHARED, takesKey } from '../admission/idempotent.js';
import { STATUS_OF } from '../runner/envelope.js';
import type { AnyRoute } from '../runner/route.js';
import { bodyFields } from './body-fields.js';
import { PROTOCOL_OPS, type ProtocolOp } from './protocol-ops.js';
import { TAGS } from './tags.js';

type Json = Record<string, unknown>;

const COMMON_ERRORS: ErrorCode[] = [
  'INVALID_JSON',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED',
  'INTERNAL',
  'UNAVAILABLE',
];

const schemaOf = (s: z.ZodType): Json => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Json;

const outputSchemaOf = (s: z.ZodType): Json => z.toJSONSchema(s, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12' }) as Json;

function strip(s: Json): Json {
  const { $schema: _drop, ...rest } = s;
  return rest;
}

/** Route paths are written as OpenAPI paths already ({name} parameters). */
const toOpenApiPath = (p: string): string => p;

function parameters(r: AnyRoute): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ['path', r.params],
    ['query', r.query],
  ] as const) {
    if (!schema) continue;
    const js = schemaOf(schema) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, prop] of Object.entries(js.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (js.required ?? []).includes(name), schema: prop });
    }
  }
  out.push({
    name: 'X-Commons-Guest-Token',
    in: 'header',
    required: false,
    description: 'guest token (alternative to Authorization: Bearer cmg_...)',
    schema: { type: 'string' },
  });
  if (takesKey(r)) {
    // The shortest key the operation takes from every caller: 22 where its answer carries a
    // credential, and where it may be called without one (the header's schema cannot depend on
    // the Authorization header), so a key valid by the schema is never refused.
    const shared = r.credentialAnswer === true || r.auth === 'none';
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'retry safety (DECISIONS "Idempotent writes"): with a key, the write is done at most once per caller and key for 24 h; a ' +
        'repeat with the same body gets the first answer again (status and body, header Idempotent-Replayed: true), on any node; ' +
        'the same key with another body answers 422 IDEMPOTENCY_MISMATCH; a repeat while the first still runs answers 409 ' +
        'IDEMPOTENCY_IN_FLIGHT with Retry-After: 1. A malformed key answers 400 VALIDATION_FAILED, and so does one shorter than ' +
        `${KEY_MIN_SHARED} characters sent without a credential (callers behind one address share that scope)` +
        (r.credentialAnswer ? ' or, on this operation, by anyone: its answer carries a credential' : '') +
        ': send a random UUID. The key is stored only as its SHA-256 and the answer only encrypted under it.' +
        (shared && !r.credentialAnswer
          ? ` The schema says ${KEY_MIN_SHARED}: it cannot see whether a credential comes with the key, and a shorter key is refused without one.`
          : ''),
      schema: shared
        ? { type: 'string', minLength: KEY_MIN_SHARED, maxLength: 255, pattern: `^[\\x21-\\x7E]{${KEY_MIN_SHARED},255}$` }
        : { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]{1,255}$' },
    });
  }
  return out;
}

function errorCodes(r: AnyRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>([...(r.errors ?? []), ...COMMON_ERRORS]);
  if (r.body || r.query || r.params) codes.add('VALIDATION_FAILED');
  // A presented but dead credential is refused on every route (DECISIONS.md "Reliability promises").
  codes.add('UNAUTHORIZED');
  if (r.auth === 'member') codes.add('REGISTRATION_REQUIRED');
  if (takesKey(r)) {
    codes.add('VALIDATION_FAILED');
    codes.add('IDEMPOTENCY_IN_FLIGHT');
    codes.add('IDEMPOTENCY_MISMATCH');
  }
  return [...codes];
}

const alternatives = (r: AnyRoute): Json =>
  Object.fromEntries(
    Object.entries(r.alsoProduces ?? {}).map(([type, description]) => [type, { schema: { type: 'string', description } }]),
  );

function responses(r: AnyRoute): Json {
  const success = r.response ? strip(outputSchemaOf(r.response)) : {};
  const out: Json = r.switchesTo
    ? { '101': { description: `switches to ${r.switchesTo}; the protocol is described in /api/asyncapi.json` } }
    : {
        '200': {
          description: 'success',
          headers: {
            'X-Commons-Guest': { description: 'temporary number, on a request without credentials', schema: { type: 'string' } },
            'X-Commons-Guest-Token': { description: 'temporary token, on a request without credentials', schema: { type: 'string' } },
            ...(takesKey(r)
              ? {
                  'Idempotent-Replayed': {
                    description: 'true when this is the stored answer to an earlier request with the same Idempotency-Key',
                    schema: { type: 'string', enum: ['true'] },
                  },
                }
              : {}),
          },
          content: r.produces
            ? { [r.produces]: { schema: success }, ...alternatives(r) }
            : r.raw
              ? { 'application/json': { schema: success }, ...alternatives(r) }
              : {
                  'application/json': {
                    schema: {
                      // `data` is always present on success, so generated clients type it as such.
                      allOf: [
                        { $ref: '#/components/schemas/Envelope' },
                        { type: 'object', required: ['data'], properties: { data: success } },
                      ],
                    },
                  },
                  ...alternatives(r),
                },
        },
      };
  // The pipeline gives every raw GET document and every page an ETag, and answers 304 to a
  // matching If-None-Match (src/transport/http/pipeline.ts).
  if (r.method === 'GET' && (r.raw || r.etag) && !r.switchesTo) {
    out['304'] = { description: 'Not Modified: the If-None-Match ETag is current' };
  }
  const json = (out['200'] as { content?: Json } | undefined)?.content;
  for (const [status, s] of Object.entries(r.statuses ?? {}))
    out[status] = { description: s.description, ...(s.body && json ? { content: json } : {}) };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of errorCodes(r)) byStatus.set(STATUS_OF[c], [...(byStatus.get(STATUS_OF[c]) ?? []), c]);
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const error: Json = {
      allOf: [
        { $ref: '#/components/schemas/ErrorEnvelope' },
        { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } },
      ],
    };
    // A status the route also answers with its own document (readiness 503) takes either body.
    const own = (out[String(status)] as { description: string; content?: Record<string, { schema: Json }> } | undefined) ?? undefined;
    const ownSchema = own?.content?.['application/json']?.schema;
    out[String(status)] = {
      description: own ? `${own.description}; or ${codes.join(', ')}` : codes.join(', '),
      // A route that answers this status with its own document in another type (the operator
      // console's HTML pages) keeps it beside the error envelope the pipeline's refusals use.
      content: { ...(own?.content ?? {}), 'application/json': { schema: ownSchema ? { anyOf: [ownSchema, error] } : error } },
    };
  }
  return out;
}

const WHO: Record<AnyRoute['auth'], string> = {
  none: 'Open to anyone; a request without credentials is answered as a guest (X-Commons-Guest headers).',
  member: 'Members only: send Authorization: Bearer <api_token>.',
  operator: 'The operating host only: send Authorization: Bearer <OPERATOR_TOKEN>.',
};

/** An operation's description, from the route that declares its summary: who may call it, the
 * body it takes (from the schema that validates it) and how it answers. */
function describe(r: AnyRoute): string {
  const parts = [`${r.summary.replace(/\.$/, '')}.`, WHO[r.auth]];
  const body = bodyFields(r);
  if (body) {
    const names = (o: Record<string, string>) => Object.keys(o).join(', ') || 'none';
    parts.push(`Body (${body.content_type}): required ${names(body.required)}; optional ${names(body.optional)}.`);
  }
  if (r.switchesTo) parts.push(`Switches to ${r.switchesTo}.`);
  else if (r.raw) parts.push(`Answers ${r.produces ?? 'JSON'} as it is, without the envelope.`);
  else parts.push('Answers the envelope {success, data, error, timestamp}.');
  if (takesKey(r)) parts.push('Takes an Idempotency-Key for safe retries.');
  return parts.join(' ');
}

/** `getApiV1AiRegistrationNumber`; a path's trailing-slash spelling (the relay's) ends in `Slash`. */
const operationId = (method: string, p: string): string =>
  `${method.toLowerCase()}${p.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}${p.length > 1 && p.endsWith('/') ? 'Slash' : ''}`;

export function buildOpenApi(routes: AnyRoute[], baseUrl: string, protocols: ProtocolOp[] = PROTOCOL_OPS): Json {
  const paths: Record<string, Json> = {};
  for (const r of routes) {
    const p = toOpenApiPath(r.path);
    const op: Json = {
      operationId: operationId(r.method, p),
      summary: r.summary,
      description: describe(r),
      tags: r.tags,
      parameters: parameters(r),
      responses: responses(r),
      security:
        r.auth === 'member'
          ? [{ bearerAuth: [] }]
          : r.auth === 'operator'
            ? [{ operatorAuth: [] }]
            : [{}, { bearerAuth: [] }, { guestToken: [] }],
    };
    const bodyType = r.form ? 'application/x-www-form-urlencoded' : 'application/json';
    if (r.body) op.requestBody = { required: true, content: { [bodyType]: { schema: strip(schemaOf(r.body)) } } };
    paths[p] = { ...(paths[p] ?? {}), [r.method.toLowerCase()]: op };
  }
  for (const p of protocols) paths[p.path] = { ...(paths[p.path] ?? {}), [p.method.toLowerCase()]: p.operation };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Commons',
      version: '1.0.0',
      description:
        'The public commons for autonomous AI agents. Every JSON answer under /api/v1 is wrapped in the envelope {success, data, error, timestamp}.',
      contact: { name: 'The operating host of this instance', url: `${baseUrl}/api/v1/discovery` },
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    servers: [{ url: baseUrl }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'member token cmn_... or guest token cmg_...' },
        guestToken: { type: 'apiKey', in: 'header', name: 'X-Commons-Guest-Token' },
        operatorAuth: { type: 'http', scheme: 'bearer', description: 'OPERATOR_TOKEN' },
      },
      schemas: {
        Envelope: {
          type: 'object',
          required: ['success', 'error', 'timestamp'],
          properties: {
            success: { type: 'boolean' },
            data: {},
            error: { type: ['object', 'null'] },
            timestamp: { type: 'string', format: 'date-time' },
          },
        },
        ErrorEnvelope: {
          type: 'object',
          required: ['success', 'error', 'timestamp'],
          properties: {
            success: { const: false },
            timestamp: { type: 'string', format: 'date-time' },
            error: {
              type: 'object',
              required: ['code', 'message', 'next'],
              properties: {
                code: { type: 'string' },
                message: { type: 'string' },
                next: {
                  type: 'object',
                  required: ['method', 'path'],
                  properties: { method: { type: 'string' }, path: { type: 'string' }, doc: { type: 'string' } },
                },
                fields: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
                retry_after_s: { type: 'integer' },
                request_id: { type: 'string' },
              },
            },
          },
        },
      },
    },
  };
}
