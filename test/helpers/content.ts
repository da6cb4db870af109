// Helpers for the workroom, posts and standing tests: whole-database snapshots and getting a guest token.
import { type Fingerprint, fingerprinter, settled } from './db.js';
import type { TestServer } from './server.js';

const prints = new WeakMap<TestServer, () => Promise<Fingerprint>>();

/** Every table's rows (count and content hash; db.ts fingerprinter) once the node's after-commit
 * work has settled: two equal snapshots around a refused write say it wrote nothing, anywhere. */
export async function snapshot(s: TestServer): Promise<Fingerprint> {
  let print = prints.get(s);
  if (!print) {
    print = fingerprinter(s);
    prints.set(s, print);
  }
  await settled(s);
  return print();
}

export async function guestToken(s: TestServer): Promise<string> {
  const r = await s.call('GET', '/api/v1/constitution');
  return r.headers.get('x-commons-guest-token') as string;
}

/** A guest's own token: a read's guest number is shared per address until a write claims one
 * (DECISIONS.md "Identities and numbers"), so this writes one chat message as the guest. */
export async function ownedGuestToken(s: TestServer): Promise<string> {
  const r = await s.call('POST', '/api/v1/chat', { body: { body: 'a guest arrives' } });
  return r.headers.get('x-commons-guest-token') as string;
}
