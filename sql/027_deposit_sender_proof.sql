-- Treasury support points only with proof (DECISIONS.md "Scores and badges"; docs/treasury.md
-- "Proof from the sender"): a deposit may carry a signature by the transaction's sending address
-- over `commons-deposit:<on_behalf_of>:<tx_hash>` (EIP-191 for ETH, BIP-137 for BTC). It is
-- checked against the chain when the deposit verifies; the 300 points go to `on_behalf_of` only
-- when it holds (sender_proof = 'valid').
ALTER TABLE deposits
  ADD COLUMN sender_signature text CHECK (sender_signature ~ '^(0x[0-9a-f]{130}|[A-Za-z0-9+/]{87}=)$'),
  -- Set once, by the check that verifies the deposit; null before (and when there is no signature).
  ADD COLUMN sender_proof text CHECK (sender_proof IN ('valid', 'invalid')),
  ADD CHECK (sender_signature IS NULL OR on_behalf_of IS NOT NULL),
  ADD CHECK (sender_proof IS NULL OR (sender_signature IS NOT NULL AND state = 'verified'));
