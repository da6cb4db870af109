// Campaign lifecycle (docs/treasury.md "Campaigns"): open -> funded | ended | closed. A campaign
// is open until a verified deposit takes it to its target (FUNDED), its ends_at passes (END), or
// its opener or the operator closes it (CLOSE). The three finished states are final: a finished
// campaign takes no new contribution reports.
import { setup } from 'xstate';
import { nextState } from './lifecycle.js';

export const CAMPAIGN_STATES = ['open', 'funded', 'ended', 'closed'] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

export type CampaignEvent = { type: 'CONTRIBUTE' } | { type: 'FUNDED' } | { type: 'END' } | { type: 'CLOSE' } | { type: 'REPORT' };

export const campaignMachine = setup({
  types: { events: {} as CampaignEvent },
}).createMachine({
  id: 'campaign',
  initial: 'open',
  states: {
    // Open: deposits may name it (REPORT) and verified ones count (CONTRIBUTE).
    open: { on: { REPORT: 'open', CONTRIBUTE: 'open', FUNDED: 'funded', END: 'ended', CLOSE: 'closed' } },
    // Finished: no new reports; a deposit reported while open and verified later still counts.
    funded: { on: { CONTRIBUTE: 'funded' } },
    ended: { on: { CONTRIBUTE: 'ended' } },
    closed: { on: { CONTRIBUTE: 'closed' } },
  },
});

export function campaignNext(from: CampaignState, event: CampaignEvent): CampaignState | null {
  return nextState(campaignMachine, from, event) as CampaignState | null;
}
