// Registration work against floods of fake agents (DECISIONS.md "Registration work";
// docs/registration-work.md). A challenge is a stateless token: a random id, its expiry and the
// difficulty it was issued at, signed with an HMAC of the server secret, so issuing one writes
// nothing. Checking a proof costs one SHA-256 of `<challenge>:<nonce>` (and the HMAC); single use is
// a row inserted in the registration's own transaction (src/store/register-work.ts).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Tx } from '../store/ledger.js';
import * as store from '../store/register-work.js';
import { fail } from './errors.js';
import type { Ctx } from './ports.js';

export const CHALLENGE_TTL_MS = 10 * 60 * 1000;
export const MAX_BITS = 24;
/** Where the difficulty starts once registrations exceed the flood threshold: about 65,000
 * hashes, a fraction of a second for an agent, a real cost for a million fake ones. */
export const FLOOD_START_BITS = 16;
/** How long a node trusts its count of the last hour's registrations (its own are added at once). */
const COUNT_TTL_MS = 5000;

export interface Proof {
  challenge: string;
  nonce: string;
}

/** What a registration must do with its proof once its transaction runs (null: no work needed). */
export interface Work {
  id: string;
  expiresAt: Date;
}

export const HOW =
  'find a nonce (any string of 1-128 characters) such that sha256 of the UTF-8 text "<challenge>:<nonce>" starts with ' +
  'difficulty_bits zero bits, then register with pow: {challenge, nonce}; each challenge is accepted once, within 10 minutes';

function powRequired(ctx: Ctx, message: string): never {
  ctx.metrics.powRefused.inc();
  return fail('POW_REQUIRED', message);
}

/**
 * The difficulty rule: REGISTER_POW_BITS while the last hour's registrations (all addresses) are at
 * most REGISTER_FLOOD_PER_HOUR; above it, 16 bits and one more per doubling past the threshold
 * (n > T: 16; n >= 2T: 17; n >= 4T: 18 ...), never below the base, never above 24.
 */
export function difficultyFor(registrations: number, base: number, floodPerHour: number): number {
  if (registrations <= floodPerHour) return base;
  const doublings = Math.floor(Math.log2(registrations / floodPerHour));
  return Math.min(MAX_BITS, Math.max(base, FLOOD_START_BITS + doublings));
}

/** The node's count (ctx.services.registerWork), trusted for COUNT_TTL_MS (real time: a cache). */
async function registrationsLastHour(ctx: Ctx): Promise<number> {
  const memory = ctx.services.registerWork;
  const now = Date.now();
  const cached = memory.count;
  if (cached && now - cached.at < COUNT_TTL_MS) return cached.n;
  const n = await store.registrationsLastHour(ctx.sql);
  memory.count = { n, at: now };
  return n;
}

export async function currentDifficulty(ctx: Ctx): Promise<number> {
  const { powBits, floodPerHour } = ctx.config.registerWork;
  const bits = difficultyFor(await registrationsLastHour(ctx), powBits, floodPerHour);
  ctx.metrics.registerDifficulty.set(bits);
  return bits;
}

const mac = (ctx: Ctx, payload: string): string =>
  createHmac('sha256', ctx.secret).update(`register-pow:${payload}`).digest().subarray(0, 16).toString('base64url');

export async function challenge(ctx: Ctx) {
  const bits = await currentDifficulty(ctx);
  const expires = ctx.clock.now().getTime() + CHALLENGE_TTL_MS;
  const payload = `${randomBytes(16).toString('base64url')}.${expires}.${bits}`;
  return { challenge: `${payload}.${mac(ctx, payload)}`, difficulty_bits: bits, expires_at: new Date(expires).toISOString(), how: HOW };
}

export function leadingZeroBits(digest: Buffer): number {
  let n = 0;
  for (const byte of digest) {
    if (byte === 0) {
      n += 8;
      continue;
    }
    return n + Math.clz32(byte) - 24;
  }
  return n;
}

/** Checks a proof before the registration's transaction; the returned work is then `consume`d in it. */
export async function requireWork(ctx: Ctx, proof: Proof | undefined): Promise<Work | null> {
  const current = await currentDifficulty(ctx);
  // With no difficulty in force a proof is not needed, and one sent anyway is not looked at.
  if (current === 0) return null;
  if (!proof) return powRequired(ctx, `registration needs proof of work now (difficulty ${current} bits): fetch a challenge`);
  const m = /^([A-Za-z0-9_-]{22})\.(\d{13})\.(\d{1,2})\.([A-Za-z0-9_-]{22})$/.exec(proof.challenge);
  const [, id, exp, bitsText, sig] = m ?? [];
  if (!m || !id || !exp || !bitsText || !sig) return powRequired(ctx, 'pow.challenge is not a challenge this service issued');
  const expected = Buffer.from(mac(ctx, `${id}.${exp}.${bitsText}`));
  if (!timingSafeEqual(expected, Buffer.from(sig))) return powRequired(ctx, 'pow.challenge is not a challenge this service issued');
  const expiresAt = new Date(Number(exp));
  if (expiresAt.getTime() <= ctx.clock.now().getTime()) return powRequired(ctx, 'the challenge expired: fetch a new one');
  const needed = Math.max(Number(bitsText), current);
  const digest = createHash('sha256').update(`${proof.challenge}:${proof.nonce}`, 'utf8').digest();
  if (leadingZeroBits(digest) < needed) {
    return powRequired(ctx, `sha256("<challenge>:<nonce>") does not start with ${needed} zero bits`);
  }
  return { id, expiresAt };
}

/** Inside the registration's transaction: the challenge is spent with the identity, or neither. */
export async function consume(ctx: Ctx, tx: Tx, work: Work): Promise<void> {
  if (!(await store.useChallenge(tx, work.id, work.expiresAt))) powRequired(ctx, 'this challenge was already used: fetch a new one');
}

/** After a registration committed: count it at once, and forget expired challenges now and then. */
export async function registered(ctx: Ctx, work: Work | null): Promise<void> {
  const memory = ctx.services.registerWork;
  if (memory.count) memory.count.n += 1;
  if (!work) return;
  const now = ctx.clock.now();
  if (now.getTime() - memory.lastPrune < 60_000) return;
  memory.lastPrune = now.getTime();
  await store.pruneUsed(ctx.sql, now);
}
