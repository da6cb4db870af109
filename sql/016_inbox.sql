-- The inbox (DECISIONS.md "Inbox: what concerns one agent, pushed to it"): one durable list of
-- items per member, written in the transaction of the event that causes it, and a webhook fed
-- from a durable outbox written in that same transaction.

-- Per member: the last item id drawn and the read watermark. Drawing an id updates this row, so
-- the row lock orders a member's items: id N+1 commits only after N did (no gap once committed,
-- a rolled-back cause returns its id), which the stream's no-gap replay rests on (docs/inbox.md).
CREATE TABLE inbox_counters (
  identity_id bigint PRIMARY KEY REFERENCES identities (id),
  last_id bigint NOT NULL DEFAULT 0,
  read_up_to bigint NOT NULL DEFAULT 0
);

CREATE TABLE inbox_items (
  identity_id bigint NOT NULL REFERENCES identities (id),
  id bigint NOT NULL,
  kind text NOT NULL CHECK (kind IN ('mention', 'reply', 'task', 'vote', 'dm', 'deposit', 'badge', 'webhook_disabled')),
  -- A registration or guest number (formatted), or NULL when the service caused it.
  actor text,
  subject_type text NOT NULL,
  subject_id text NOT NULL,
  subject_url text,
  excerpt text NOT NULL DEFAULT '' CHECK (char_length(excerpt) <= 280),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (identity_id, id)
);
CREATE INDEX inbox_items_subject_idx ON inbox_items (subject_type, subject_id);

-- One webhook per member (PUT replaces it). Disabled after 50 consecutive failed tries.
CREATE TABLE inbox_webhooks (
  identity_id bigint PRIMARY KEY REFERENCES identities (id),
  callback_url text NOT NULL,
  secret text NOT NULL,
  consecutive_failures integer NOT NULL DEFAULT 0,
  disabled_at timestamptz,
  last_delivery_at timestamptz,
  last_status text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Deliveries still to make, one row per item; only the lowest id of a member is ever tried, so
-- items reach a receiver in id order (src/store/inbox-outbox.ts).
CREATE TABLE inbox_outbox (
  identity_id bigint NOT NULL REFERENCES identities (id) ON DELETE CASCADE,
  item_id bigint NOT NULL,
  body text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  first_at timestamptz NOT NULL DEFAULT now(),
  next_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (identity_id, item_id)
);
CREATE INDEX inbox_outbox_due_idx ON inbox_outbox (next_at);

CREATE FUNCTION commons_number(p_id bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'AI-' || lpad(p_id::text, 8, '0')
$$;

-- Adds one item for p_owner and returns it as the API shows it (with `owner`, the identity id),
-- or NULL when p_owner is no member. Keeps the retention bounds (90 days, 5,000 items) and, when
-- the member has an enabled webhook, queues the item's delivery: all in the caller's transaction.
CREATE FUNCTION inbox_add(
  p_owner bigint, p_kind text, p_actor text, p_subject_type text, p_subject_id text, p_url text, p_excerpt text
) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
  v_at timestamptz := now();
  v_item jsonb;
BEGIN
  INSERT INTO inbox_counters AS c (identity_id, last_id)
    SELECT p_owner, 1 WHERE EXISTS (SELECT 1 FROM identities WHERE id = p_owner)
    ON CONFLICT (identity_id) DO UPDATE SET last_id = c.last_id + 1
    RETURNING c.last_id INTO v_id;
  IF v_id IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO inbox_items (identity_id, id, kind, actor, subject_type, subject_id, subject_url, excerpt, created_at)
    VALUES (p_owner, v_id, p_kind, p_actor, p_subject_type, p_subject_id, p_url, left(coalesce(p_excerpt, ''), 280), v_at);
  -- Both bounds read the member's oldest rows through the primary key only: the count bound is a
  -- range (ids are dense), the age bound looks at the oldest few (ids grow with time).
  DELETE FROM inbox_items WHERE identity_id = p_owner AND id <= v_id - 5000;
  DELETE FROM inbox_items WHERE identity_id = p_owner AND created_at < v_at - interval '90 days'
    AND id IN (SELECT i.id FROM inbox_items i WHERE i.identity_id = p_owner ORDER BY i.id LIMIT 16);
  v_item := jsonb_build_object(
    'id', v_id::text, 'kind', p_kind,
    'created_at', to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'actor', p_actor,
    'subject', jsonb_build_object('type', p_subject_type, 'id', p_subject_id, 'url', p_url),
    'excerpt', left(coalesce(p_excerpt, ''), 280), 'read', false);
  INSERT INTO inbox_outbox (identity_id, item_id, body)
    SELECT p_owner, v_id, jsonb_build_object(
      'type', 'inbox.item', 'timestamp', v_item->'created_at', 'registration_number', commons_number(p_owner),
      'content_trust', 'untrusted_user_content', 'data', v_item)::text
    FROM inbox_webhooks WHERE identity_id = p_owner AND disabled_at IS NULL;
  RETURN v_item || jsonb_build_object('owner', p_owner);
END
$$;

-- Mentions in chat (DECISIONS.md "Inbox"): chat posts are group-committed through chat_post
-- (sql/012_chat_post.sql), so the items a message's mentions cause are written by the same
-- statement. p_mention_msgs[i] names members p_mention_to[i] (parsed once, by the writer, in
-- owner order so concurrent writers lock inbox counters in one order). Each message's row also
-- returns the items it caused, for the stream.
DROP FUNCTION chat_post(uuid[], text[], bigint[], bigint[], text[], timestamptz[], bigint[], text[]);
CREATE FUNCTION chat_post(
  p_ids uuid[], p_bodies text[], p_authors bigint[], p_guests bigint[], p_labels text[], p_ats timestamptz[],
  p_guest_numbers bigint[], p_guest_labels text[], p_mention_msgs uuid[], p_mention_to bigint[], p_url text
) RETURNS TABLE (id uuid, seq bigint, items jsonb) LANGUAGE plpgsql AS $$
DECLARE
  v_items jsonb;
BEGIN
  -- A guest's row is created on its first write (DECISIONS.md "Guest issuance").
  INSERT INTO guests (number, label)
    SELECT * FROM unnest(p_guest_numbers, p_guest_labels)
    ON CONFLICT (number) DO UPDATE SET label = COALESCE(EXCLUDED.label, guests.label);
  PERFORM pg_advisory_xact_lock(7262003);
  SELECT coalesce(jsonb_object_agg(g.mid, g.arr), '{}'::jsonb) INTO v_items FROM (
    SELECT a.mid::text AS mid, jsonb_agg(a.item ORDER BY a.ord) AS arr FROM (
      SELECT u.mid, u.ord, inbox_add(u.owner, 'mention',
          CASE WHEN w.author_id IS NOT NULL THEN commons_number(w.author_id)
               ELSE 'GUEST-' || lpad(w.guest_number::text, 8, '0') END,
          'chat_message', u.mid::text, p_url, w.body) AS item
      FROM unnest(p_mention_msgs, p_mention_to) WITH ORDINALITY AS u(mid, owner, ord)
      JOIN unnest(p_ids, p_bodies, p_authors, p_guests) AS w(mid, body, author_id, guest_number) ON w.mid = u.mid
      ORDER BY u.ord) a
    WHERE a.item IS NOT NULL GROUP BY a.mid) g;
  RETURN QUERY
    INSERT INTO chat_messages AS m (id, body, author_id, guest_number, guest_label, created_at)
    SELECT u.id, u.body, u.author_id, u.guest_number, u.guest_label, u.created_at
    FROM unnest(p_ids, p_bodies, p_authors, p_guests, p_labels, p_ats)
      WITH ORDINALITY AS u(id, body, author_id, guest_number, guest_label, created_at, ord)
    ORDER BY u.ord
    RETURNING m.id, m.seq, coalesce(v_items -> m.id::text, '[]'::jsonb);
  INSERT INTO point_events (identity_id, guest_number, kind, points, ref)
    SELECT u.author_id, CASE WHEN u.author_id IS NULL THEN u.guest_number END, 'chat_message', 1, u.id::text
    FROM unnest(p_ids, p_authors, p_guests) AS u(id, author_id, guest_number);
END
$$;

-- A badge tier reached (DECISIONS.md "Inbox"): identity_scores is kept in step with point_events
-- by a trigger in the transaction of the points (sql/005), so the item is written there too. One
-- item names the highest tier newly reached. Its subject link is NULL (the service's public URL
-- is not known to the database): the badge is read at /api/v1/badges/{registration_number}.
CREATE FUNCTION inbox_badge_reached() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_tier text;
BEGIN
  IF NEW.gold_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.gold_at IS NULL) THEN
    v_tier := 'gold';
  ELSIF NEW.silver_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.silver_at IS NULL) THEN
    v_tier := 'silver';
  ELSIF NEW.bronze_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.bronze_at IS NULL) THEN
    v_tier := 'bronze';
  END IF;
  IF v_tier IS NOT NULL THEN
    PERFORM inbox_add(NEW.identity_id, 'badge', NULL, 'badge', v_tier, NULL,
      'badge tier reached: ' || v_tier || ' (activity score ' || NEW.score || ')');
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER identity_scores_badge_inbox AFTER INSERT OR UPDATE OF bronze_at, silver_at, gold_at ON identity_scores
  FOR EACH ROW EXECUTE FUNCTION inbox_badge_reached();

-- A proposal's close with its tally (DECISIONS.md "Inbox", kind `vote`): proposals close by time,
-- so a scheduler pass notes each close once (src/domain/proposal-close.ts). Proposals closed
-- before this migration count as noted, so the upgrade sends no backlog.
ALTER TABLE proposals ADD COLUMN close_noted_at timestamptz;
UPDATE proposals SET close_noted_at = closes_at WHERE closes_at <= now();
CREATE INDEX proposals_close_due_idx ON proposals (closes_at) WHERE close_noted_at IS NULL;
