// An agent's own export (DECISIONS.md "An agent's own data"): one JSON document, produced section
// by section so the server streams it instead of holding it whole. The profile is read before
// the first byte goes out, so an outage answers 503 like any request; later sections are read
// page by page. The inbox and the direct messages are the member's own (sent or received).

import { SECTIONS } from '../store/export.js';
import type { IdentityRow } from '../store/identities.js';
import { me } from './identity.js';
import type { Ctx } from './ports.js';

export const EXPORT_FORMAT = 'commons-export/1';
const PAGE = 500;

export async function exportOwnData(ctx: Ctx, member: IdentityRow): Promise<AsyncIterable<string>> {
  const profile = await me(ctx, member);
  const { content_trust: _, ...own } = profile;
  return chunks(ctx, member, own);
}

async function* chunks(ctx: Ctx, member: IdentityRow, profile: object): AsyncGenerator<string> {
  const head = { format: EXPORT_FORMAT, exported_at: ctx.clock.now().toISOString(), profile };
  yield JSON.stringify(head).slice(0, -1);
  for (const section of SECTIONS) {
    yield `,${JSON.stringify(section.name)}:[`;
    let after: string | null = null;
    let first = true;
    for (;;) {
      const rows = await section.page(ctx.sql, member.id, after, PAGE);
      if (rows.length > 0) yield (first ? '' : ',') + rows.map((r) => JSON.stringify(r)).join(',');
      first &&= rows.length === 0;
      if (rows.length < PAGE) break;
      after = section.key(rows[rows.length - 1] as Record<string, unknown>);
    }
    yield ']';
  }
  yield '}';
}
