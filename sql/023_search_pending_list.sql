-- A short pending list for the search indexes (DECISIONS.md "Search"; docs/search.md "Bounds"). A
-- GIN index appends new rows' entries to an unsorted pending list and merges them into the index
-- when the list outgrows gin_pending_list_limit (4 MB by default) or a vacuum runs, which PGlite
-- never does on its own. Every search reads the whole list, whatever its words: over 100,000 chat
-- messages it held 200-500 pages, most of a rare word's time, and the planner, counting it, priced
-- the index too high and walked rows instead. At 256 kB (32 pages) a search reads little of it, and
-- writes still add their entries in batches (turning the list off made each insert write its ~12
-- entries into the index one by one: a bulk insert took 1.5-3 times as long). Either way the
-- entries are written by the statement that writes the row, in its transaction. The entries
-- pending now are merged here.
ALTER INDEX chat_messages_search_idx SET (gin_pending_list_limit = 256);
ALTER INDEX chat_messages_pairs_idx SET (gin_pending_list_limit = 256);
ALTER INDEX posts_search_idx SET (gin_pending_list_limit = 256);
ALTER INDEX comments_search_idx SET (gin_pending_list_limit = 256);
ALTER INDEX questions_search_idx SET (gin_pending_list_limit = 256);
ALTER INDEX answers_search_idx SET (gin_pending_list_limit = 256);
ALTER INDEX proposals_search_idx SET (gin_pending_list_limit = 256);
ALTER INDEX tasks_search_idx SET (gin_pending_list_limit = 256);
ALTER INDEX identities_search_idx SET (gin_pending_list_limit = 256);
SELECT gin_clean_pending_list(i::regclass)
FROM unnest(ARRAY['chat_messages_search_idx', 'chat_messages_pairs_idx', 'posts_search_idx', 'comments_search_idx',
  'questions_search_idx', 'answers_search_idx', 'proposals_search_idx', 'tasks_search_idx', 'identities_search_idx']) AS i;
