// Provisional guest tokens without a signature per read (src/domain/tokens.ts, layout v2; issue
// 47): the signed part is made once per address window and each read appends a nonce of its own,
// so every read's token is still its own (DECISIONS.md "Identities and numbers": its first write
// claims a number for that token alone), a changed signed part is refused, and the v1 tokens
// already handed out keep working until they expire.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { base64urlInto, readNonceInto } from '../../src/domain/guest-nonces.js';
import { GuestIssuer } from '../../src/domain/guests.js';
import type { Ctx } from '../../src/domain/ports.js';
import { hashToken, NONCE_BYTES, READ_NONCE_CHARS, signGuestToken, verifyGuestToken } from '../../src/domain/tokens.js';

const secret = randomBytes(32);

function issuer(clock: { s: number }): GuestIssuer {
  const ctx = { secret, clock: { now: () => new Date(clock.s * 1000), nowMs: () => clock.s * 1000 } } as unknown as Ctx;
  const g = new GuestIssuer(ctx);
  // A block of numbers as if reserved in the database (no database here).
  Object.assign(g, { next: 1, end: 1000 });
  return g;
}

async function read(g: GuestIssuer, address: string) {
  const p = g.provisional(address);
  return p instanceof Promise ? await p : p;
}

it("gives each read from one address a token of its own, all of the address's provisional number", async () => {
  const clock = { s: 2_000_000_000 };
  const g = issuer(clock);
  const first = await read(g, '192.0.2.1');
  const tokens = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const r = await read(g, '192.0.2.1');
    expect(r.guestNumber).toBe(first.guestNumber);
    tokens.add(r.token);
    expect(verifyGuestToken(secret, r.token, clock.s)).toEqual({ guestNumber: first.guestNumber, issuedAtS: clock.s, provisional: true });
  }
  expect(tokens.size).toBe(2000);
  // Distinct tokens are distinct claims: a write claims a number for its token's hash alone.
  expect(new Set([...tokens].map((t) => hashToken(t).toString('hex'))).size).toBe(2000);
  // Another address has another number.
  expect((await read(g, '192.0.2.2')).guestNumber).not.toBe(first.guestNumber);
});

it('signs a new part when the window has passed: the issue time stays recent', async () => {
  const clock = { s: 2_000_000_000 };
  const g = issuer(clock);
  const a = await read(g, '192.0.2.1');
  clock.s += 30;
  const b = await read(g, '192.0.2.1');
  expect(verifyGuestToken(secret, b.token, clock.s)?.issuedAtS).toBe(clock.s - 30);
  expect(b.token.slice(0, 60)).toBe(a.token.slice(0, 60));
  clock.s += 31;
  const c = await read(g, '192.0.2.1');
  expect(verifyGuestToken(secret, c.token, clock.s)?.issuedAtS).toBe(clock.s);
  expect(c.guestNumber).toBe(a.guestNumber);
});

it('refuses a token whose signed part was changed, another secret, or a spelling that was not issued', async () => {
  const clock = { s: 2_000_000_000 };
  const g = issuer(clock);
  const { token } = await read(g, '192.0.2.1');
  expect(token).toHaveLength(4 + 68);
  const body = token.slice(4);
  for (let i = 0; i < 56; i++) {
    const flipped = `cmg_${body.slice(0, i)}${body[i] === 'A' ? 'B' : 'A'}${body.slice(i + 1)}`;
    expect(verifyGuestToken(secret, flipped, clock.s), `character ${i}`).toBeNull();
  }
  expect(verifyGuestToken(randomBytes(32), token, clock.s)).toBeNull();
  expect(verifyGuestToken(secret, `${token}=`, clock.s)).toBeNull();
  expect(verifyGuestToken(secret, token.slice(0, -1), clock.s)).toBeNull();
  expect(verifyGuestToken(secret, `${token}AAAA`, clock.s)).toBeNull();
});

it('still accepts the v1 provisional tokens and owned tokens, and refuses them once expired', () => {
  const now = 2_000_000_000;
  const v1 = signGuestToken(secret, 42, now - 10, randomBytes(NONCE_BYTES));
  expect(verifyGuestToken(secret, v1, now)).toEqual({ guestNumber: 42, issuedAtS: now - 10, provisional: true });
  const owned = signGuestToken(secret, 43, now - 10);
  expect(verifyGuestToken(secret, owned, now)).toEqual({ guestNumber: 43, issuedAtS: now - 10, provisional: false });
  expect(verifyGuestToken(secret, v1, now + 31 * 24 * 3600)).toBeNull();
});

it("makes the lean read's tokens the same way: the window's signed part and a nonce written in place, each read its own", async () => {
  const clock = { s: 2_000_000_000 };
  const g = issuer(clock);
  // Unknown address: the lean path declines (the general path issues the number).
  expect(g.provisionalBase('192.0.2.9')).toBeNull();
  const first = await read(g, '192.0.2.9');
  const base = g.provisionalBase('192.0.2.9');
  expect(base).toMatchObject({ guestNumber: first.guestNumber, number: first.number });
  expect(first.token.startsWith(base?.base as string)).toBe(true);
  const bytes = Buffer.from(`${base?.base}${'A'.repeat(READ_NONCE_CHARS)}`, 'latin1');
  const tokens = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    readNonceInto(bytes, bytes.length - READ_NONCE_CHARS);
    const token = bytes.toString('latin1');
    expect(verifyGuestToken(secret, token, clock.s)).toEqual({ guestNumber: first.guestNumber, issuedAtS: clock.s, provisional: true });
    tokens.add(token);
  }
  expect(tokens.size).toBe(2000);
  // A new window is a new signed part; a claimed number is no longer the address's.
  clock.s += 61;
  expect(g.provisionalBase('192.0.2.9')?.signedAtS).toBe(clock.s);
  g.claimed(first.guestNumber);
  expect(g.provisionalBase('192.0.2.9')).toBeNull();
});

it("dates the lean read's signed part by the clock, kept through its window and renewed past it", async () => {
  const clock = { s: 2_000_000_000 };
  const g = issuer(clock);
  const first = await read(g, '192.0.2.10');
  const base = g.provisionalBase('192.0.2.10');
  expect(base?.signedAtS).toBe(clock.s);
  clock.s += 59;
  expect(g.provisionalBase('192.0.2.10')).toBe(base);
  // Past the window: a new signed part dated by the clock.
  clock.s += 1;
  const next = g.provisionalBase('192.0.2.10');
  expect(next?.signedAtS).toBe(clock.s);
  const bytes = Buffer.from(`${next?.base}${'A'.repeat(READ_NONCE_CHARS)}`, 'latin1');
  readNonceInto(bytes, bytes.length - READ_NONCE_CHARS);
  expect(verifyGuestToken(secret, bytes.toString('latin1'), clock.s)).toEqual({
    guestNumber: first.guestNumber,
    issuedAtS: clock.s,
    provisional: true,
  });
});

it("spells a read nonce pool as node's base64url does (every byte value, each position of a triple)", () => {
  const src = Buffer.alloc(3 * 256 * 3);
  for (let i = 0; i < 256; i++) {
    src[i * 9] = i;
    src[i * 9 + 4] = i;
    src[i * 9 + 8] = i;
    src[i * 9 + 1] = 255 - i;
  }
  const out = Buffer.alloc((src.length / 3) * 4);
  base64urlInto(src, out);
  expect(out.toString('latin1')).toBe(src.toString('base64url'));
});
