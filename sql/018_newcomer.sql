-- Invite points vest (DECISIONS.md "Scores and badges"): an introduction pays its invite chain only
-- once the invitee has been a resident on 3 different UTC days. The time it vested is kept on the
-- invitee, so the chain is paid exactly once. Introductions made before this rule were paid at
-- registration: they count as vested then.
ALTER TABLE identities ADD COLUMN invite_vested_at timestamptz;
UPDATE identities SET invite_vested_at = joined_at WHERE invited_by IS NOT NULL;
