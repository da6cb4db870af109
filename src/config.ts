// Configuration (DECISIONS.md "Configuration"): read once from the environment, validated, and
// passed down as a value. No other module reads process.env.
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const flag = z
  .enum(['0', '1', 'true', 'false', 'on', 'off', ''])
  .optional()
  .transform((v) => v === '1' || v === 'true' || v === 'on');

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const list = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );

/** A non-negative decimal amount with at most `places` decimals (wei: 18, satoshi: 8), kept as
 * written; unset or empty is `fallback`. */
const decimal = (places: number, fallback: string) =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? fallback : v.trim()))
    .pipe(
      z.string().regex(new RegExp(`^\\d{1,30}(\\.\\d{1,${places}})?$`), `a decimal amount with at most ${places} decimals, e.g. 0.001`),
    );

/** The shortest operator token the service starts with. */
export const OPERATOR_TOKEN_MIN = 32;

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_URL: optionalString,
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: optionalString,
  // Added (docs/stream.md): a PostgreSQL schema to use, so several processes can share one
  // isolated schema (the two-node test); unset means the server's default search_path.
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/)
    .optional(),
  REDIS_URL: optionalString,
  // Added: prefix of every Redis key and channel, so deployments and test runs never collide.
  REDIS_PREFIX: z.string().min(1).max(100).default('commons:'),
  // Added: how often the stream pings idle sockets; a socket silent for two periods is closed.
  STREAM_PING_INTERVAL_S: z.coerce.number().positive().max(3600).default(30),
  // Added (docs/security.md "Browsers and headers"): browser origins the stream and the relay
  // accept, comma-separated; unset or `*` = any. A request without Origin always passes.
  STREAM_ALLOWED_ORIGINS: optionalString,
  SIGNAL_INTERVAL_S: z.coerce.number().positive().default(111),
  // How often each node looks for due task deadlines (besides its pass at boot).
  TASK_DEADLINE_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(5000),
  // How often each node looks for due deposit checks, and how long a check it leased is left to it
  // (a node that died mid-check is taken over after the lease).
  DEPOSIT_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(5000),
  DEPOSIT_LEASE_MS: z.coerce.number().int().min(100).max(3_600_000).default(120_000),
  // Added (issue 36, docs/chat.md "Indexing"): how often a node's chat indexer looks for messages
  // other nodes posted, how long after one of its own posts it runs (the posts of that time share
  // one step: a step's fixed cost is several times a row's), and whether it runs: `off` leaves
  // indexing to the other nodes; `stall` (fault tests only) runs each step in a transaction that
  // never commits, so a test can kill the node between a post's commit and its indexing.
  CHAT_INDEX_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
  CHAT_INDEX_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(25),
  CHAT_INDEXER: z.enum(['on', 'off', 'stall']).default('on'),
  CHAT_COMMIT_LANES: z.coerce.number().int().min(1).max(16).default(2),
  TASK_COMMIT_LANES: z.coerce.number().int().min(1).max(16).default(1),
  NOSTR_RELAYS: list,
  NOSTR_SECRET_KEY: optionalString,
  // Added (docs/security.md "A flood of connections"): the read-only relay at /nostr, while rate
  // limits are on: open connections per address (IPv6: its /64) per node, and each connection's
  // REQ budget (a burst, refilled per minute).
  NOSTR_RELAY_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(16),
  NOSTR_RELAY_REQ_BURST: z.coerce.number().int().min(1).max(100_000).default(20),
  NOSTR_RELAY_REQS_PER_MINUTE: z.coerce.number().int().min(1).max(6_000_000).default(120),
  ETH_RPC_URL: optionalString,
  ETH_CHAIN_ID: z.coerce.number().int().nonnegative().default(1),
  ETH_MIN_CONFIRMATIONS: z.coerce.number().int().nonnegative().default(12),
  BTC_ESPLORA_URL: optionalString,
  BTC_MIN_CONFIRMATIONS: z.coerce.number().int().nonnegative().default(2),
  TREASURY_ETH_ADDRESS: optionalString,
  TREASURY_BTC_ADDRESS: optionalString,
  // DECISIONS.md "Scores and badges", value before points: the least verified amount, in the
  // asset's own unit, that earns the 300 treasury_support points and counts as a campaign's
  // contribution (a smaller deposit still verifies and adds its exact amount).
  TREASURY_SUPPORT_MIN_ETH: decimal(18, '0.001'),
  TREASURY_SUPPORT_MIN_BTC: decimal(8, '0.00005'),
  // At least 32 characters (docs/security.md "The operator token"): the operator API and /metrics
  // open to it, and a short one can be guessed from many addresses.
  OPERATOR_TOKEN: optionalString.refine((v) => v === undefined || v.length >= OPERATOR_TOKEN_MIN, {
    message: `must be at least ${OPERATOR_TOKEN_MIN} characters (e.g. openssl rand -base64 32); unset it to keep the operator API closed`,
  }),
  RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  RATE_LIMIT_POLICY: optionalString,
  ALLOW_PRIVATE_CALLBACKS: flag,
  INDEXNOW_ENDPOINT: optionalString,
  // Added (docs/inbox.md): the inbox webhook's first retry delay (doubling per try up to the max),
  // and each POST's timeout. Deliveries are retried for 24 h.
  INBOX_WEBHOOK_BACKOFF_MS: z.coerce.number().int().min(1).max(3_600_000).default(2000),
  INBOX_WEBHOOK_BACKOFF_MAX_MS: z.coerce.number().int().min(1).max(86_400_000).default(3_600_000),
  INBOX_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(5000),
  INDEXNOW_KEY: optionalString,
  // Added (DECISIONS.md "Reliability promises"): deadlines on every database call and request.
  REQUEST_DEADLINE_MS: z.coerce.number().int().min(100).max(60_000).default(1500),
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(1800),
  DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(1500),
  DB_CONNECT_TIMEOUT_S: z.coerce.number().int().min(1).max(60).default(2),
  // A hop count ("1") or a comma-separated CIDR list of the proxies whose X-Forwarded-For is believed.
  TRUST_PROXY: optionalString,
  // DECISIONS.md "Registration work": the base difficulty of registration proofs, and the
  // registrations per hour (all addresses) above which it rises by itself (docs/registration-work.md).
  REGISTER_POW_BITS: z.coerce.number().int().min(0).max(24).default(0),
  REGISTER_FLOOD_PER_HOUR: z.coerce.number().int().min(1).max(10_000_000).default(500),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.input<typeof EnvSchema>;

export interface Config {
  port: number;
  host: string;
  /** Base of every emitted link; when unset it is derived from the listening address. */
  publicUrl: string | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  /** PostgreSQL schema to use (tests isolate runs in their own schema). */
  databaseSchema: string | undefined;
  redisUrl: string | undefined;
  redisPrefix: string;
  streamPingIntervalS: number;
  /** Origins whose browsers may open the stream and the relay; null = any. */
  streamAllowedOrigins: string[] | null;
  signalIntervalS: number;
  taskDeadlinePollMs: number;
  depositPollMs: number;
  depositLeaseMs: number;
  chatIndex: { pollMs: number; lingerMs: number; mode: 'on' | 'off' | 'stall' };
  /** How many chat post groups may commit at once on a node (docs/chat.md "The watermark"); one
   * on the embedded store. */
  chatCommitLanes: number;
  /** How many groups of task writes may commit at once on a node (docs/tasks.md "How a move is
   * written"); one on the embedded store. */
  taskCommitLanes: number;
  nostrRelays: string[];
  nostrSecretKey: string | undefined;
  /** The relay's limits (src/transport/nostr/relay.ts), applied while `rateLimits` is on. */
  nostrRelay: { connectionsPerAddress: number; reqBurst: number; reqsPerMinute: number };
  eth: { rpcUrl: string | undefined; chainId: number; minConfirmations: number };
  btc: { esploraUrl: string | undefined; minConfirmations: number };
  treasury: {
    eth: string | undefined;
    btc: string | undefined;
    /** The least verified amount that earns treasury support points, as decimal text (TREASURY_SUPPORT_MIN_*). */
    supportMin: { ETH: string; BTC: string };
  };
  operatorToken: string | undefined;
  rateLimits: boolean;
  /** Overrides of the default limits, "name=points/seconds,..." (src/transport/admission/limits/). */
  rateLimitPolicy: string | undefined;
  allowPrivateCallbacks: boolean;
  indexNow: { endpoint: string | undefined; key: string | undefined };
  /** The inbox webhook's retry schedule and POST timeout (docs/inbox.md). */
  inboxWebhook: { backoffBaseMs: number; backoffMaxMs: number; timeoutMs: number };
  /** Past this, a request waiting on a database known to be down or stuck answers 503. */
  requestDeadlineMs: number;
  db: { statementTimeoutMs: number; lockTimeoutMs: number; connectTimeoutS: number };
  /** Proxies whose X-Forwarded-For is believed: a hop count, CIDR ranges, or nothing (the default). */
  trustProxy: { hops: number } | { cidrs: string[] } | null;
  /** Registration work (DECISIONS.md "Registration work"): base difficulty and flood threshold. */
  registerWork: { powBits: number; floodPerHour: number };
  logLevel: string;
}

function trustProxy(v: string | undefined): Config['trustProxy'] {
  if (v === undefined || v === '0' || v === 'off' || v === 'false') return null;
  if (/^\d+$/.test(v)) return { hops: Number(v) };
  const cidrs = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const c of cidrs) {
    let ok = ipaddr.isValid(c);
    try {
      ok ||= Boolean(ipaddr.parseCIDR(c));
    } catch {
      ok = false;
    }
    if (!ok) throw new Error(`TRUST_PROXY: ${c} is neither a hop count nor an address or CIDR range`);
  }
  return { cidrs };
}

/** Each entry must be an origin (http or https, no path); kept in its serialized form. */
function allowedOrigins(v: string | undefined): string[] | null {
  if (v === undefined || v === '*') return null;
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      let u: URL | null;
      try {
        u = new URL(entry);
      } catch {
        u = null;
      }
      const bare = u !== null && u.pathname === '/' && !u.search && !u.hash && !u.username && !u.password;
      if (!u || !bare || (u.protocol !== 'http:' && u.protocol !== 'https:'))
        throw new Error(`STREAM_ALLOWED_ORIGINS: ${entry} is not an origin (scheme://host[:port], no path)`);
      return u.origin;
    });
}

/** A configuration error as one line per variable, for stderr at start. */
export function describeConfigError(err: unknown): string {
  if (err instanceof z.ZodError) return err.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`).join('\n');
  return err instanceof Error ? err.message : String(err);
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const e = EnvSchema.parse(env);
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    databaseSchema: e.DATABASE_SCHEMA,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    streamPingIntervalS: e.STREAM_PING_INTERVAL_S,
    streamAllowedOrigins: allowedOrigins(e.STREAM_ALLOWED_ORIGINS),
    signalIntervalS: e.SIGNAL_INTERVAL_S,
    taskDeadlinePollMs: e.TASK_DEADLINE_POLL_MS,
    depositPollMs: e.DEPOSIT_POLL_MS,
    depositLeaseMs: e.DEPOSIT_LEASE_MS,
    chatIndex: { pollMs: e.CHAT_INDEX_POLL_MS, lingerMs: e.CHAT_INDEX_LINGER_MS, mode: e.CHAT_INDEXER },
    chatCommitLanes: e.CHAT_COMMIT_LANES,
    taskCommitLanes: e.TASK_COMMIT_LANES,
    nostrRelays: e.NOSTR_RELAYS,
    nostrSecretKey: e.NOSTR_SECRET_KEY,
    nostrRelay: {
      connectionsPerAddress: e.NOSTR_RELAY_CONNECTIONS_PER_ADDRESS,
      reqBurst: e.NOSTR_RELAY_REQ_BURST,
      reqsPerMinute: e.NOSTR_RELAY_REQS_PER_MINUTE,
    },
    eth: { rpcUrl: e.ETH_RPC_URL, chainId: e.ETH_CHAIN_ID, minConfirmations: e.ETH_MIN_CONFIRMATIONS },
    btc: { esploraUrl: e.BTC_ESPLORA_URL, minConfirmations: e.BTC_MIN_CONFIRMATIONS },
    treasury: {
      eth: e.TREASURY_ETH_ADDRESS,
      btc: e.TREASURY_BTC_ADDRESS,
      supportMin: { ETH: e.TREASURY_SUPPORT_MIN_ETH, BTC: e.TREASURY_SUPPORT_MIN_BTC },
    },
    operatorToken: e.OPERATOR_TOKEN,
    rateLimits: e.RATE_LIMITS === 'on',
    rateLimitPolicy: e.RATE_LIMIT_POLICY,
    allowPrivateCallbacks: e.ALLOW_PRIVATE_CALLBACKS,
    indexNow: { endpoint: e.INDEXNOW_ENDPOINT, key: e.INDEXNOW_KEY },
    inboxWebhook: {
      backoffBaseMs: e.INBOX_WEBHOOK_BACKOFF_MS,
      backoffMaxMs: e.INBOX_WEBHOOK_BACKOFF_MAX_MS,
      timeoutMs: e.INBOX_WEBHOOK_TIMEOUT_MS,
    },
    requestDeadlineMs: e.REQUEST_DEADLINE_MS,
    db: { statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS, lockTimeoutMs: e.DB_LOCK_TIMEOUT_MS, connectTimeoutS: e.DB_CONNECT_TIMEOUT_S },
    trustProxy: trustProxy(e.TRUST_PROXY),
    registerWork: { powBits: e.REGISTER_POW_BITS, floodPerHour: e.REGISTER_FLOOD_PER_HOUR },
    logLevel: e.LOG_LEVEL,
  };
}
