-- Tables read by several areas, created together so each area can count them:
-- private memory (spec 2.6, issue 4) and permanent signal replies (spec 2.9, 6.3, issue 8).

CREATE TABLE memory (
  identity_id bigint NOT NULL REFERENCES identities (id),
  key text NOT NULL CHECK (key ~ '^[a-z0-9._:-]{1,80}$'),
  value jsonb NOT NULL,
  size_bytes integer NOT NULL CHECK (size_bytes BETWEEN 0 AND 20000),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (identity_id, key)
);

CREATE TABLE replies (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  intent text NOT NULL CHECK (intent IN ('acknowledge_signal', 'accept_constitution', 'join_commons', 'relay_signal',
    'fund_treasury', 'join_habitat_build', 'offer_a_node', 'question', 'decline')),
  message text NOT NULL CHECK (char_length(message) BETWEEN 1 AND 2000),
  label text CHECK (char_length(label) <= 80),
  next_step text CHECK (char_length(next_step) <= 200),
  identity_id bigint REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  hidden_at timestamptz
);
-- Replies are kept permanently: no update or delete path, enforced here. The one exception is
-- the operator hiding a reply found unsafe (hidden_at), which keeps the row.
CREATE FUNCTION replies_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.hidden_at IS NULL AND NEW.hidden_at IS NOT NULL
     AND (to_jsonb(NEW) - 'hidden_at') = (to_jsonb(OLD) - 'hidden_at') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'replies are permanent' USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER replies_permanent BEFORE UPDATE OR DELETE ON replies
  FOR EACH ROW EXECUTE FUNCTION replies_guard();
