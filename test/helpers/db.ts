// Reading the database behind a test server: row counts and a whole-database fingerprint (to
// check that a refusal wrote nothing) and the numeric identity id inside a registration number.
import type { Residents } from '../../src/actors/residents.js';
import { presenceOf } from '../../src/domain/presence.js';
import { memberForRead } from '../../src/domain/token-cache.js';
import { hashToken } from '../../src/domain/tokens.js';
import type { TestServer } from './server.js';
import { waitFor } from './wait.js';

/** Rows in `table` (optionally filtered by a SQL condition written by the test itself). */
export async function countRows(s: TestServer, table: string, where?: string): Promise<number> {
  const [row] = await s.app.ctx.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}${where ? ` WHERE ${where}` : ''}`);
  return row?.n ?? 0;
}

/** The identity id inside a registration number such as `ZHO-12`. */
export const idOf = (registrationNumber: string): number => Number(registrationNumber.slice(3));

/** Tables the node's actors fill after a commit (the chat index, mentions and deliveries, the
 * signal): derived from what was written, never written by a refused request themselves. */
const DERIVED = new Set([
  'chat_index',
  'chat_search',
  'inbox_items',
  'inbox_outbox',
  'inbox_counters',
  'push_outbox',
  'signal_emissions',
  'nostr_events',
  'settings',
]);

export type Fingerprint = Record<string, unknown>;

/** Every table's row count and content hash but the derived ones, in one statement (built once
 * per server: the tables are those of its schema). */
export function fingerprinter(s: TestServer): () => Promise<Fingerprint> {
  let text: Promise<string> | undefined;
  const statement = async () => {
    const tables = await s.app.ctx.sql<
      { t: string }[]
    >`SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`;
    const parts = tables
      .map((r) => r.t)
      .filter((t) => !DERIVED.has(t))
      .map((t) => `(SELECT count(*) || ':' || coalesce(sum(hashtext(x::text)::bigint), 0) FROM "${t}" x) AS "${t}"`);
    return `SELECT ${parts.join(', ')}`;
  };
  return async () => {
    text ??= statement();
    return ((await s.app.ctx.sql.unsafe(await text)) as unknown as Fingerprint[])[0] as Fingerprint;
  };
}

/** The tables whose rows differ between two fingerprints. */
export const changedTables = (a: Fingerprint, b: Fingerprint): string[] => Object.keys(a).filter((k) => a[k] !== b[k]);

/** Waits for what the node writes after an answer (the chat indexer's points and scores, the
 * coalesced heartbeats), so a fingerprint taken next holds only what later requests write. */
export async function settled(s: TestServer): Promise<void> {
  await waitFor(
    async () => {
      const [row] = await s.app.ctx.sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM chat_messages WHERE seq > (SELECT indexed_seq FROM chat_index)`;
      return row?.n === 0;
    },
    10_000,
    'chat indexed',
  );
  await (presenceOf(s.app.ctx) as Residents).flush();
}

/** Waits until one other backend of the server's database waits on a lock in a statement whose
 * text contains `query`: a barrier for "that statement is now blocked", with no pause. */
export async function lockWaiter(s: TestServer, query: string, what: string): Promise<void> {
  const like = `%${query}%`;
  await waitFor(
    async () =>
      (
        await s.app.ctx.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE ${like} AND pid <> pg_backend_pid()`
      )[0]?.n === 1,
    10_000,
    what,
  );
}

/** A member token taken into the node's token cache (as a read takes it), then changed in the
 * database only, as a rotation on another node whose bus message has not come. The caller stops the
 * clock (Date) around it, so the entry is still fresh when the request comes, whatever the machine's
 * speed. */
export async function staleUnderNode(s: TestServer, token: string): Promise<void> {
  const hash = hashToken(token);
  await memberForRead(s.app.ctx, { digest: hash.toString('base64'), hash });
  await s.app.ctx.sql`UPDATE identities SET token_hash = ${hashToken(`${token}-changed`)} WHERE token_hash = ${hash}`;
}
