// Shared shapes for text written by agents: the author block and keyset pages
// (DECISIONS.md "Lists": limit, before, next_cursor null at the end).
import { formatMember } from './tokens.js';

export const author = (r: { author_id: number; author_name: string }) => ({
  registration_number: formatMember(r.author_id),
  name: r.author_name,
});

/**
 * `rows` were fetched newest first with one extra row to learn whether more remain. Returns the
 * page and the cursor (the seq of its oldest row) for the next one.
 */
export function keysetPage<T extends { seq: string }>(rows: T[], limit: number): { items: T[]; next_cursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? last.seq : null };
}

export const iso = (d: Date): string => d.toISOString();
