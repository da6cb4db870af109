-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION commons_number(p_id bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'AI-' || lpad(p_id::text, 8, '0')
$$;
