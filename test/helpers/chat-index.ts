// Waiting on the chat indexer's promise (docs/chat.md "Indexing"; issue 36): a chat post's search
// columns, point and score, and mention items are written after its answer, within 1 s (p99) at
// half of saturation and 5 s at saturation. Tests that read them after a post wait until the
// node reports no message left to index (the /metrics gauge commons_chat_unindexed_messages, read
// from the database), failing after the promise's 5 s: every post answered before the call is
// then indexed (it was committed before its answer).
import { waitFor } from './wait.js';

/** The freshness promised at saturation (docs/chat.md "Indexing"). */
export const CHAT_INDEX_PROMISE_MS = 5000;

const SERIES = 'commons_chat_unindexed_messages';

/** Resolves once every chat message committed so far is indexed; `target` is a server's base URL
 * or anything with `url` (a test server, a child node). With `orEarlierBuild`, a server without the
 * gauge (a build before the indexer, whose posts derived everything in their own transaction, as
 * the upgrade test runs) counts as indexed. */
export async function chatIndexed(
  target: string | { url: string },
  ms = CHAT_INDEX_PROMISE_MS,
  opts: { orEarlierBuild?: boolean } = {},
): Promise<void> {
  const base = typeof target === 'string' ? target : target.url;
  let missing = false;
  await waitFor(
    async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${SERIES} `));
      missing = line === undefined;
      return missing || Number(line?.slice(SERIES.length + 1)) === 0;
    },
    ms,
    `chat indexed (${SERIES} 0)`,
  );
  if (missing && !opts.orEarlierBuild) throw new Error(`/metrics has no ${SERIES}`);
}
