-- 0021_reembed_fill (issue 17; PostgreSQL): see migrations/0021_reembed_fill.sql. NULL: every memory
-- has its vector (or is flagged embedding_pending); N: memories with an id above N may still lack one.
-- IF NOT EXISTS: a test that replays the steps after 0017 (tests/test_pg_vector_backlog.py) runs it twice.
ALTER TABLE embedder_info ADD COLUMN IF NOT EXISTS refill_after BIGINT;
