// Push subscriptions to the signal (DECISIONS.md "Signal, feeds, replies, push").
import { z } from 'zod';
import * as push from '../../domain/push.js';
import { PLAIN_SECRET, WHSEC } from '../../domain/webhook-secret.js';
import { checkCallbackUrl } from '../push/address.js';
import { ok, route } from '../runner/route.js';
import { uuidParam } from '../runner/schemas.js';
import { member } from './identity.js';

export const Subscription = z.object({
  id: z.string(),
  callback_url: z.string(),
  state: z.enum(['active', 'paused']),
  consecutive_failures: z.number(),
  paused_at: z.string().nullable(),
  last_delivery_at: z.string().nullable(),
  last_status: z.string().nullable(),
  created_at: z.string(),
});

/** The three secret forms (DECISIONS.md "Contract exactness"; src/domain/webhook-secret.ts). */
const Secret = z
  .union([
    z
      .string()
      .regex(WHSEC)
      .describe(
        'Standard Webhooks secret: the HMAC key is the base64-decoded part after whsec_; pass it as is to a Standard Webhooks verifier',
      ),
    z
      .string()
      .regex(PLAIN_SECRET)
      .describe(
        'any other 16-200 characters: the HMAC key is its UTF-8 bytes; a Standard Webhooks verifier needs "whsec_" + base64 of those bytes',
      ),
  ])
  .optional()
  .describe('omitted: the service generates a whsec_ secret and returns it once, in this answer');

// A callback URL's form, spelled as a pattern a stranger's validator runs (DECISIONS.md "Contract
// exactness"): http(s), no credentials before the host, and a host that the WHATWG URL parser
// reads: a name whose last label starts with a letter (an all-digit last label is read as IPv4),
// a dotted IPv4 address, or a bracketed IPv6 one; a port up to 65535.
const H = '[0-9A-Fa-f]{1,4}';
const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = `(${OCTET}\\.){3}${OCTET}`;
const IPV6 = [
  `(${H}:){7}${H}`,
  `(${H}:){1,7}:`,
  `(${H}:){1,6}:${H}`,
  `(${H}:){1,5}(:${H}){1,2}`,
  `(${H}:){1,4}(:${H}){1,3}`,
  `(${H}:){1,3}(:${H}){1,4}`,
  `(${H}:){1,2}(:${H}){1,5}`,
  `${H}:(:${H}){1,6}`,
  `:((:${H}){1,7}|:)`,
  // An IPv4 address inside (::ffff:1.2.3.4, 64:ff9b::1.2.3.4): the address policy then judges it.
  `::(ffff(:0{1,4})?:)?${IPV4}`,
  `(${H}:){1,4}:${IPV4}`,
].join('|');
const HOST = `(([A-Za-z0-9-]+\\.)*[A-Za-z][A-Za-z0-9-]*\\.?|${IPV4}|\\[(${IPV6})\\])`;
const PORT = '(:0*(6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|\\d{1,4})?)?';
const CALLBACK_FORM = new RegExp(`^[Hh][Tt][Tt][Pp][Ss]?://${HOST}${PORT}([/?#]\\S*)?$`);

/** A callback URL as checked, published (format uri and the pattern above); whether its host is
 * public is state, checked when it is set (src/transport/push/address.ts). */
export const CallbackUrl = z
  .string()
  .trim()
  .min(8)
  .max(2000)
  .regex(CALLBACK_FORM, 'an http(s) URL without credentials, with a host name, an IPv4 or a [IPv6] address')
  .refine((s) => URL.canParse(s), 'not a valid URL')
  .meta({ format: 'uri' })
  .describe('http(s) URL on a public address');

export const SubscribeBody = z.object({
  callback_url: CallbackUrl,
  secret: Secret,
});

/** The secret the service generated for a subscription that sent none: shown once. */
export const GeneratedSecret = z
  .string()
  .optional()
  .describe(
    'present only when the request sent no secret: the generated whsec_ secret, shown this once (a Standard Webhooks verifier takes it as is)',
  );

export const pushRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/relay/subscriptions',
    auth: 'member',
    summary: 'Subscribe a callback URL to the signal; each emission is POSTed to it, signed (X-Commons-Signature and Standard Webhooks)',
    tags: ['signal'],
    body: SubscribeBody,
    response: Subscription.extend({ secret: GeneratedSecret }),
    credentialAnswer: true,
    handler: async (req, ctx) => {
      const url = await checkCallbackUrl(req.body.callback_url, ctx.config.allowPrivateCallbacks);
      return ok(await push.subscribe(ctx, member(req.caller), url, req.body.secret));
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/relay/subscriptions',
    auth: 'member',
    summary: 'Your push subscriptions and their delivery state',
    tags: ['signal'],
    response: z.object({ subscriptions: z.array(Subscription), next_cursor: z.null() }),
    handler: async (req, ctx) => ok(await push.listOwn(ctx, member(req.caller))),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/relay/subscriptions/{id}',
    auth: 'member',
    summary: 'Remove one of your push subscriptions',
    tags: ['signal'],
    params: uuidParam,
    response: z.object({ id: z.string(), deleted: z.literal(true) }),
    errors: ['NOT_FOUND', 'FORBIDDEN'],
    handler: async (req, ctx) => ok(await push.unsubscribe(ctx, member(req.caller), req.params.id)),
  }),
];
