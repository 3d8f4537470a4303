-- 0001_initial: memories, tags, history, merges, access log, embedder record, FTS5 index.
-- Timestamps are UNIX epoch seconds (REAL). JSON columns hold JSON text.
-- The vec0 vector table is created by the store once the embedder (and so the
-- dimension) is known; see harness_memory/sqlite_backend.py.

CREATE TABLE memories (
    id                INTEGER PRIMARY KEY,
    uid               TEXT NOT NULL UNIQUE,          -- stable identity across export/import
    namespace         TEXT NOT NULL,
    agent_id          TEXT NOT NULL,
    scope             TEXT NOT NULL CHECK (scope IN ('agent', 'global')),
    memory_type       TEXT NOT NULL,
    content           TEXT NOT NULL CHECK (length(content) > 0),
    key               TEXT,
    task_signature    TEXT,
    error_signature   TEXT,
    error_template    TEXT,
    context_tags      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(context_tags)),
    importance        REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
    relevance_score   REAL NOT NULL DEFAULT 1.0 CHECK (relevance_score >= 0 AND relevance_score <= 1),
    access_count      INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    last_accessed     REAL,
    times_applied     INTEGER NOT NULL DEFAULT 0 CHECK (times_applied >= 0),
    times_successful  INTEGER NOT NULL DEFAULT 0 CHECK (times_successful >= 0 AND times_successful <= times_applied),
    success_rate      REAL,
    session_id        TEXT,
    task_id           TEXT,
    metadata          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    content_hash      TEXT NOT NULL,
    created_at        REAL NOT NULL,
    updated_at        REAL NOT NULL,
    expires_at        REAL,
    decayed_at        REAL,                          -- last time decay was applied (maintenance)
    archived          INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    pinned            INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    consolidated_into INTEGER REFERENCES memories(id) ON DELETE SET NULL,
    embedding_pending INTEGER NOT NULL DEFAULT 0 CHECK (embedding_pending IN (0, 1)),
    version           INTEGER NOT NULL DEFAULT 1
);

CREATE UNIQUE INDEX ux_memories_key ON memories(namespace, agent_id, memory_type, key) WHERE key IS NOT NULL;
CREATE INDEX ix_memories_hash ON memories(namespace, agent_id, scope, memory_type, content_hash);
CREATE INDEX ix_memories_visible ON memories(namespace, scope, agent_id, memory_type);
CREATE INDEX ix_memories_task_sig ON memories(namespace, task_signature) WHERE task_signature IS NOT NULL;
CREATE INDEX ix_memories_error_sig ON memories(namespace, error_signature) WHERE error_signature IS NOT NULL;
CREATE INDEX ix_memories_expires ON memories(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX ix_memories_pending ON memories(embedding_pending) WHERE embedding_pending = 1;
CREATE INDEX ix_memories_created ON memories(namespace, created_at);

CREATE TABLE memory_tags (
    memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    tag       TEXT NOT NULL,
    PRIMARY KEY (memory_id, tag)
) WITHOUT ROWID;
CREATE INDEX ix_memory_tags_tag ON memory_tags(tag, memory_id);

-- Previous versions of memories updated in place through a key.
CREATE TABLE memory_history (
    id            INTEGER PRIMARY KEY,
    memory_id     INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    version       INTEGER NOT NULL,
    content       TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    context_tags  TEXT NOT NULL,
    importance    REAL NOT NULL,
    metadata      TEXT NOT NULL,
    valid_from    REAL NOT NULL,
    valid_until   REAL NOT NULL
);
CREATE INDEX ix_memory_history_memory ON memory_history(memory_id, version);

-- Exact and near duplicates folded into an existing memory.
CREATE TABLE memory_merges (
    id             INTEGER PRIMARY KEY,
    memory_id      INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    kind           TEXT NOT NULL CHECK (kind IN ('exact', 'near')),
    similarity     REAL NOT NULL,
    merged_content TEXT NOT NULL,
    merged_hash    TEXT NOT NULL,
    agent_id       TEXT,
    session_id     TEXT,
    task_id        TEXT,
    merged_at      REAL NOT NULL
);
CREATE INDEX ix_memory_merges_memory ON memory_merges(memory_id);

CREATE TABLE memory_access_log (
    id          INTEGER PRIMARY KEY,
    memory_id   INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    agent_id    TEXT,
    session_id  TEXT,
    task_id     TEXT,
    access_type TEXT NOT NULL CHECK (access_type IN ('query', 'applied', 'updated', 'invalidated')),
    was_helpful INTEGER CHECK (was_helpful IN (0, 1)),
    outcome     TEXT,
    score       REAL,
    timestamp   REAL NOT NULL
);
CREATE INDEX ix_access_log_memory ON memory_access_log(memory_id);
CREATE INDEX ix_access_log_agent ON memory_access_log(agent_id);
CREATE INDEX ix_access_log_time ON memory_access_log(timestamp);

-- The embedder the stored vectors were made with (one row).
CREATE TABLE embedder_info (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    name        TEXT NOT NULL,
    dimensions  INTEGER NOT NULL CHECK (dimensions > 0),
    recorded_at REAL NOT NULL
);

-- Every change to the vector table, so in-process vector caches can catch up incrementally.
CREATE TABLE vector_changes (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id INTEGER NOT NULL,
    op        TEXT NOT NULL CHECK (op IN ('put', 'del'))
);

-- MEMORY.md files last synchronised per agent: skip unchanged files, detect deletions.
CREATE TABLE markdown_sync (
    namespace  TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    file_hash  TEXT NOT NULL,
    uids       TEXT NOT NULL CHECK (json_valid(uids)),
    synced_at  REAL NOT NULL,
    PRIMARY KEY (namespace, agent_id)
);

CREATE VIRTUAL TABLE memories_fts USING fts5(
    content, tags,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
