-- 0012_episodes (PostgreSQL): threads, episodes and reflection (issue 14).
-- thread_id links short-term memories (type 'episode') to one conversation or run; reflected_at
-- marks an episode turned into durable memories by reflect(); memory_sources links each
-- reflected memory to the episodes it came from (deleting either side deletes the link).
ALTER TABLE memories ADD COLUMN thread_id TEXT;
ALTER TABLE memories ADD COLUMN reflected_at DOUBLE PRECISION;
CREATE INDEX ix_memories_thread ON memories(namespace, thread_id, created_at) WHERE thread_id IS NOT NULL;
-- the reflect job's question: which threads have episodes not yet reflected
CREATE INDEX ix_memories_unreflected ON memories(namespace, thread_id) WHERE thread_id IS NOT NULL AND reflected_at IS NULL;

CREATE TABLE memory_sources (
    memory_id BIGINT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    source_id BIGINT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL DEFAULT 'reflection',
    added_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (memory_id, source_id)
);
CREATE INDEX ix_memory_sources_source ON memory_sources(source_id);
