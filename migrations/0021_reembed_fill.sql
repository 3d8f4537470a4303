-- 0021_reembed_fill (issue 17): a re-embedding fills the new vector table in bounded batches after a
-- short swap instead of inside one transaction. NULL: every memory has its vector (or is flagged
-- embedding_pending); a number N: memories with an id above N may still lack one (a reembed's fill in
-- progress, or interrupted: backfill_embeddings() and the backfill job resume it). Twin:
-- migrations/postgres/0021_reembed_fill.sql.
ALTER TABLE embedder_info ADD COLUMN refill_after INTEGER;
