-- 0013_documents: documents and their chunks (issue 14). A chunk is a memory of type 'document'
-- (searchable by recall like any memory); document_chunks ties it to its document and position,
-- with the chunk's hash so re-adding the same source re-indexes only the chunks that changed.
CREATE TABLE documents (
    id           INTEGER PRIMARY KEY,
    uid          TEXT NOT NULL UNIQUE,
    namespace    TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    scope        TEXT NOT NULL CHECK (scope IN ('agent', 'global')),
    source       TEXT NOT NULL,
    title        TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('markdown', 'code', 'text')),
    content_hash TEXT NOT NULL,
    chunks       INTEGER NOT NULL CHECK (chunks >= 0),
    bytes        INTEGER NOT NULL CHECK (bytes >= 0),
    tags         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    metadata     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL,
    UNIQUE (namespace, agent_id, source)
);

CREATE TABLE document_chunks (
    document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL CHECK (position >= 0),
    memory_id   INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    chunk_hash  TEXT NOT NULL,
    occurrence  INTEGER NOT NULL DEFAULT 0,
    heading     TEXT,
    PRIMARY KEY (document_id, position)
);
CREATE INDEX ix_document_chunks_memory ON document_chunks(memory_id);
