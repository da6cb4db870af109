// Registration work from the client's side (docs/registration-work.md): fetch a challenge and find a
// nonce whose sha256("<challenge>:<nonce>") has enough leading zero bits, or one that has too few.
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { TestServer } from './server.js';

export function zeroBits(challenge: string, nonce: string): number {
  const d = createHash('sha256').update(`${challenge}:${nonce}`, 'utf8').digest();
  let n = 0;
  for (const b of d) {
    if (b === 0) {
      n += 8;
      continue;
    }
    return n + Math.clz32(b) - 24;
  }
  return n;
}

/** The first nonce meeting `bits` (bits = 16 takes about 65,000 hashes, a fraction of a second). */
export function solve(challenge: string, bits: number): string {
  for (let i = 0; ; i++) if (zeroBits(challenge, String(i)) >= bits) return String(i);
}

/** A nonce that falls short of `bits` (bits >= 1). */
export function miss(challenge: string, bits: number): string {
  for (let i = 0; ; i++) if (zeroBits(challenge, `miss${i}`) < bits) return `miss${i}`;
}

export async function getChallenge(s: TestServer): Promise<{ challenge: string; difficulty_bits: number; expires_at: string }> {
  const r = await s.call('GET', '/api/v1/ai/register/challenge');
  expect(r.status, r.text).toBe(200);
  return r.json.data;
}

/** A solved proof for the challenge the server hands out now. */
export async function proof(s: TestServer): Promise<{ challenge: string; nonce: string }> {
  const c = await getChallenge(s);
  return { challenge: c.challenge, nonce: solve(c.challenge, c.difficulty_bits) };
}
