-- 0018_vector_backlog (issue 10; PostgreSQL): a batch's vectors may wait outside the HNSW graph.
-- remember_many writes them with pending = TRUE; the HNSW index of a store created (or re-embedded,
-- or rebuilt by compact) from this step on is partial (WHERE NOT pending), so such rows cost no graph
-- insert in the batch; searches read them exactly through ix_memory_vectors_pending beside the graph,
-- and compact (or a batch that finds more than PostgresBackend.BACKLOG_ROWS waiting) moves them into
-- it. A store whose HNSW index predates this step keeps its full index (rows are never pending there)
-- until compact rebuilds it. The vector table exists only once the embedder is recorded. ANALYZE: without
-- statistics of the new column the planner took the backlog for half the table (a sequential scan of
-- 1M rows, 1.2 s, instead of the pending index).
ALTER TABLE IF EXISTS memory_vectors ADD COLUMN IF NOT EXISTS pending BOOLEAN NOT NULL DEFAULT FALSE;
DO $$ BEGIN IF to_regclass('memory_vectors') IS NOT NULL THEN CREATE INDEX IF NOT EXISTS ix_memory_vectors_pending ON memory_vectors(namespace, agent_id, scope, memory_type) WHERE pending; ANALYZE memory_vectors; END IF; END $$;
