-- 0019_gin_pending_lists (issue 10; PostgreSQL): the keyword indexes' GIN pending lists kept short.
-- A GIN index with fastupdate (the default) appends new entries to a pending list that every search
-- of the index reads whole, until the list passes gin_pending_list_limit (4 MB) or a vacuum flushes
-- it; autovacuum comes after 20% of a table is new, so a growing store searched a list of about 330
-- pages on every keyword search (a rare word: 7.7 ms before, 0.4 ms after a flush, 100k memories,
-- load 8). With a 64 kB limit a writer flushes the list once it holds 8 pages: 1,000 tsvector rows
-- took 142-183 ms instead of 40-50 ms (fastupdate off: 415-466 ms). The lists are flushed now.
ALTER INDEX ix_memories_fts_doc SET (gin_pending_list_limit = 64);
ALTER INDEX ix_fix_links_excerpt SET (gin_pending_list_limit = 64);
SELECT gin_clean_pending_list('ix_memories_fts_doc'::regclass);
SELECT gin_clean_pending_list('ix_fix_links_excerpt'::regclass);
