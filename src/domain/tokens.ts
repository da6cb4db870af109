// Credentials (DECISIONS.md "Identities and numbers"). Member tokens are 32 random bytes,
// base64url, prefixed cmn_; only their SHA-256 is stored. Guest tokens are self-contained:
// cmg_ + base64url(guest number, issue time, HMAC) so that an anonymous read writes no row.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const MEMBER_PREFIX = 'cmn_';
export const GUEST_PREFIX = 'cmg_';
export const GUEST_TOKEN_TTL_S = 30 * 24 * 3600;

// Formatting a number is on every answer's path (heartbeats above all): below 10^8 the eight
// digits are the tail of 10^8 + id, which is cheaper than padStart.
export const formatMember = (id: number | bigint): string =>
  typeof id === 'number' && id >= 0 && id < 1e8 ? `AI-${String(1e8 + id).slice(1)}` : `AI-${String(id).padStart(8, '0')}`;
export const formatGuest = (n: number | bigint): string => `GUEST-${String(n).padStart(8, '0')}`;

export function parseMember(s: string): number | null {
  const m = /^AI-(\d{8})$/.exec(s);
  return m ? Number(m[1]) : null;
}

export function newMemberToken(): { token: string; hash: Buffer } {
  const token = MEMBER_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** The key a member token is known by in counters and session records: the first 22 base64url
 * characters (132 bits) of its stored hash, never the token itself. */
export const tokenKeyOfHash = (hash: Buffer): string => hash.toString('base64url').slice(0, 22);

export function newInviteCode(): string {
  // 10 characters of Crockford-like base32: easy to read aloud and to type.
  const alphabet = 'abcdefghjkmnpqrstvwxyz23456789';
  const bytes = randomBytes(10);
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

// Guest token layout: 6 bytes guest number | 4 bytes issue time (s) | 22 bytes HMAC = 32 bytes.
// The top bit of the number field marks a provisional guest: the number handed to anonymous
// reads from one client address, shared by them (DECISIONS.md "Identities and numbers"). A
// provisional token also carries an 8-byte nonce after the issue time, so the token of each read
// is its own: its first write claims a number for that token alone. Two provisional layouts:
// - v1 (40 bytes): payload (18) | HMAC (22), signed per read; still accepted until it expires.
// - v2 (51 bytes): payload (18) | HMAC (24) | read nonce (9). The signed part (42 bytes, 56
//   base64url characters) is signed once per address window (src/domain/guests.ts) and each read
//   appends a nonce of its own (12 characters), so a read costs no HMAC (issue 47). The read nonce
//   is not signed, and needs not be: it only tells tokens apart. A client that changes it holds
//   another token of the same provisional number, which it gets anyway by reading again; whoever
//   writes with a token claims a number for that exact token (its hash), as before.
const MAC_BYTES = 22;
const PROVISIONAL_BIT = 2 ** 47;
export const NONCE_BYTES = 8;
const V2_MAC_BYTES = 24;
export const READ_NONCE_BYTES = 9;
/** base64url characters of a v2 token's read nonce (9 bytes: no spare bits). */
export const READ_NONCE_CHARS = (READ_NONCE_BYTES / 3) * 4;

function guestPayload(guestNumber: number, issuedAtS: number, nonce?: Buffer): Buffer {
  const payload = Buffer.alloc(nonce ? 10 + NONCE_BYTES : 10);
  payload.writeUIntBE(guestNumber + (nonce ? PROVISIONAL_BIT : 0), 0, 6);
  payload.writeUInt32BE(issuedAtS >>> 0, 6);
  if (nonce) nonce.copy(payload, 10, 0, NONCE_BYTES);
  return payload;
}

const mac = (secret: Buffer, payload: Buffer, bytes: number): Buffer =>
  createHmac('sha256', secret).update(payload).digest().subarray(0, bytes);

/** Signs a guest token (an owned guest's); with a nonce, a v1 provisional one. */
export function signGuestToken(secret: Buffer, guestNumber: number, issuedAtS: number, nonce?: Buffer): string {
  const payload = guestPayload(guestNumber, issuedAtS, nonce);
  return GUEST_PREFIX + Buffer.concat([payload, mac(secret, payload, MAC_BYTES)]).toString('base64url');
}

/** The signed part of v2 provisional tokens (prefix included): a read's token is this followed by
 * READ_NONCE_CHARS base64url characters of its own. */
export function signProvisionalBase(secret: Buffer, guestNumber: number, issuedAtS: number, windowNonce: Buffer): string {
  const payload = guestPayload(guestNumber, issuedAtS, windowNonce);
  return GUEST_PREFIX + Buffer.concat([payload, mac(secret, payload, V2_MAC_BYTES)]).toString('base64url');
}

/** What a valid guest token says. */
export interface GuestClaims {
  guestNumber: number;
  issuedAtS: number;
  provisional: boolean;
}

export function verifyGuestToken(secret: Buffer, token: string, nowS: number): GuestClaims | null {
  if (!token.startsWith(GUEST_PREFIX)) return null;
  const raw = Buffer.from(token.slice(GUEST_PREFIX.length), 'base64url');
  // One spelling (DECISIONS.md "Every door, the same rules"): the decoder skips padding, stray
  // characters and spare bits, so only the token as it was issued is taken.
  if (GUEST_PREFIX + raw.toString('base64url') !== token) return null;
  const v2 = raw.length === 10 + NONCE_BYTES + V2_MAC_BYTES + READ_NONCE_BYTES;
  const macBytes = v2 ? V2_MAC_BYTES : MAC_BYTES;
  const size = v2 ? 10 + NONCE_BYTES : raw.length - MAC_BYTES;
  if (size !== 10 && size !== 10 + NONCE_BYTES) return null;
  const payload = raw.subarray(0, size);
  if (!timingSafeEqual(mac(secret, payload, macBytes), raw.subarray(size, size + macBytes))) return null;
  const field = payload.readUIntBE(0, 6);
  const provisional = field >= PROVISIONAL_BIT;
  // A nonce makes sense only on a provisional token (tokens signed before nonces had none).
  if (size !== 10 && !provisional) return null;
  const guestNumber = provisional ? field - PROVISIONAL_BIT : field;
  const issuedAtS = payload.readUInt32BE(6);
  if (nowS - issuedAtS > GUEST_TOKEN_TTL_S || issuedAtS - nowS > 300) return null;
  return { guestNumber, issuedAtS, provisional };
}

/** Constant-time string equality (operator token). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
