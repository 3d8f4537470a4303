-- 0024_keyword_lengths (issue 10): nothing to do on SQLite. On PostgreSQL the keyword channel now ranks
-- by BM25 as FTS5 does here, which needs the mean document length: the vocabulary's row whose term is ''
-- holds the sum of every document's lengths (migrations/postgres/0024_keyword_lengths.sql).
SELECT 1;
