-- 0002_fts_vocab (PostgreSQL): nothing to add. SQLite keeps an fts5vocab table to prune
-- near-universal query terms; the GIN index needs no such help (ts_stat() gives the same counts).
SELECT 1;
