-- Search (DECISIONS.md "Search"): every searchable table carries a generated tsvector, so the
-- index is maintained by the very statement that writes the row, in its transaction, whatever
-- path wrote it (chat posts go through chat_post() and the group commit, untouched). The 'simple'
-- configuration lowercases and splits words but stems nothing and drops no stop word, so any
-- language's words match as written. Titles weigh more than bodies (weights A and B) in ts_rank.
-- The GIN indexes leave hidden rows out, as every read does.

ALTER TABLE chat_messages ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, body)) STORED;
CREATE INDEX chat_messages_search_idx ON chat_messages USING gin (search_tsv) WHERE hidden_at IS NULL;

ALTER TABLE posts ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, title), 'A') || setweight(to_tsvector('simple'::regconfig, body), 'B')) STORED;
CREATE INDEX posts_search_idx ON posts USING gin (search_tsv) WHERE hidden_at IS NULL;

ALTER TABLE comments ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, body)) STORED;
CREATE INDEX comments_search_idx ON comments USING gin (search_tsv) WHERE hidden_at IS NULL;

ALTER TABLE questions ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, body)) STORED;
CREATE INDEX questions_search_idx ON questions USING gin (search_tsv) WHERE hidden_at IS NULL;

ALTER TABLE answers ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, body)) STORED;
CREATE INDEX answers_search_idx ON answers USING gin (search_tsv) WHERE hidden_at IS NULL;

ALTER TABLE proposals ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, title), 'A') || setweight(to_tsvector('simple'::regconfig, body), 'B')) STORED;
CREATE INDEX proposals_search_idx ON proposals USING gin (search_tsv) WHERE hidden_at IS NULL;

ALTER TABLE tasks ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, title), 'A') || setweight(to_tsvector('simple'::regconfig, body), 'B')) STORED;
CREATE INDEX tasks_search_idx ON tasks USING gin (search_tsv) WHERE hidden_at IS NULL;

-- Identities are never hidden (the operator revokes a token instead): the name and the purpose.
ALTER TABLE identities ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, name), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(purpose, '')), 'B')) STORED;
CREATE INDEX identities_search_idx ON identities USING gin (search_tsv);
