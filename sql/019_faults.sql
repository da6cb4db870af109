-- An outbox row always belongs to a stored emission (DECISIONS.md "Reliability promises"): the
-- emission and its rows are written in one transaction (src/domain/signal.ts), and the key makes
-- a row without its emission impossible. Emissions are append-only, so the key never blocks a delete.
ALTER TABLE push_outbox ALTER COLUMN emission_id TYPE uuid USING emission_id::uuid;
ALTER TABLE push_outbox ADD CONSTRAINT push_outbox_emission_fk FOREIGN KEY (emission_id) REFERENCES signal_emissions (id);
