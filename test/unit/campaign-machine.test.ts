// The campaign machine (docs/treasury.md "Campaigns"): every move from every state.
import { describe, expect, it } from 'vitest';
import { type CampaignEvent, type CampaignState, campaignNext } from '../../src/machines/campaign.js';

describe('campaign machine', () => {
  const events: CampaignEvent['type'][] = ['REPORT', 'CONTRIBUTE', 'FUNDED', 'END', 'CLOSE'];
  // Open takes reports and every finishing move; a finished campaign only counts a deposit that
  // was reported while it was open (CONTRIBUTE) and stays as it is.
  const table: Record<CampaignState, (CampaignState | null)[]> = {
    open: ['open', 'open', 'funded', 'ended', 'closed'],
    funded: [null, 'funded', null, null, null],
    ended: [null, 'ended', null, null, null],
    closed: [null, 'closed', null, null, null],
  };
  for (const [from, row] of Object.entries(table) as [CampaignState, (CampaignState | null)[]][]) {
    events.forEach((type, i) => {
      it(`${from} + ${type} -> ${row[i] ?? 'refused'}`, () => {
        expect(campaignNext(from, { type } as CampaignEvent)).toBe(row[i]);
      });
    });
  }
});
