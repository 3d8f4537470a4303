-- 0021_reembed_fill (issue 17; PostgreSQL): see migrations/0021_reembed_fill.sql. NULL: every memory
-- has its vector (or is flagged embedding_pending); N: memories with an id above N may still lack one.
ALTER TABLE embedder_info ADD COLUMN refill_after BIGINT;
