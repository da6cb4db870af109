// The member token, kept per service in the user's config folder (XDG), readable by the user
// only: the folder 0700, the file 0600, written whole (a temporary file renamed over it) so a
// crash never leaves half a token.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Identity {
  registration_number: string;
  name: string;
  token: string;
  saved_at: string;
}

type File = { version: 1; identities: Record<string, Identity> };

export const credentialsPath = (configDir: string): string => join(configDir, 'credentials.json');

/** One key per service: its origin and path, without a trailing slash. */
export const serviceKey = (server: string): string => server.replace(/\/+$/, '');

function read(configDir: string): File {
  try {
    const f = JSON.parse(readFileSync(credentialsPath(configDir), 'utf8')) as File;
    if (f && typeof f === 'object' && f.identities && typeof f.identities === 'object') return f;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`cannot read ${credentialsPath(configDir)}: ${(e as Error).message}`);
  }
  return { version: 1, identities: {} };
}

export function loadIdentity(configDir: string, server: string): Identity | undefined {
  return read(configDir).identities[serviceKey(server)];
}

export function saveIdentity(configDir: string, server: string, id: Identity): string {
  const f = read(configDir);
  f.identities[serviceKey(server)] = id;
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  chmodSync(configDir, 0o700);
  const path = credentialsPath(configDir);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(f, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return path;
}
