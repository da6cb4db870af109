-- Refuses the caller's transaction unless every member named still holds the token it wrote with:
-- p_hashes[i] (the SHA-256 of the token, hex) must be identities.token_hash of p_ids[i]. A write
-- whose member came from the node's token cache (src/domain/token-cache.ts) sends this with its
-- first statement, so a token rotated or revoked on any node is refused by the write's own
-- transaction (DECISIONS.md "Reliability promises") without a round trip of its own: task posts
-- and moves (src/domain/tasks.ts). Raises SQLSTATE CM401 (the caller answers 401) naming the first
-- member whose token is no longer its own; nothing of the transaction is written.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION member_tokens_check(p_ids bigint[], p_hashes text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_stale bigint;
BEGIN
  SELECT u.id INTO v_stale FROM unnest(p_ids, p_hashes) AS u(id, h)
    WHERE NOT EXISTS (SELECT 1 FROM identities i WHERE i.id = u.id AND i.token_hash = decode(u.h, 'hex'))
    LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'the token member % wrote with is no longer its token', v_stale USING ERRCODE = 'CM401';
  END IF;
END
$$;
