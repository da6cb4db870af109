-- Value before points (DECISIONS.md "Scores and badges"): a campaign that finishes with no counted
-- contribution gives its opening points back (kind funding_campaign_withdrawn, ref campaign:<id>,
-- src/domain/campaigns.ts). A campaign finishes once; this index makes a second withdrawal fail
-- instead of taking the points twice.
CREATE UNIQUE INDEX point_events_campaign_withdrawn_once ON point_events (ref) WHERE kind = 'funding_campaign_withdrawn';
