-- 0006_fix_links: error→fix links as data, fix kinds, and the excerpts that were signed.
-- A fix (a memory) links to every error signature it was taught for, with per-link counts of
-- worked / did not work and of apply() credits given for that error. De-duplication and
-- keyed updates add links to the surviving memory; deleting a memory deletes its links.
CREATE TABLE fix_links (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id       INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    error_signature TEXT NOT NULL,
    error_category  TEXT,
    error_message   TEXT,
    worked          INTEGER NOT NULL DEFAULT 0 CHECK (worked >= 0),
    failed          INTEGER NOT NULL DEFAULT 0 CHECK (failed >= 0),
    helpful         INTEGER NOT NULL DEFAULT 0 CHECK (helpful >= 0),
    unhelpful       INTEGER NOT NULL DEFAULT 0 CHECK (unhelpful >= 0),
    first_at        REAL NOT NULL,
    last_at         REAL NOT NULL,
    -- the error's variable parts the fix names (JSON list): it applies to errors with those values only
    bound_params    TEXT CHECK (bound_params IS NULL OR json_valid(bound_params)),
    UNIQUE (memory_id, error_signature)
);
CREATE INDEX ix_fix_links_signature ON fix_links(error_signature);
CREATE INDEX ix_fix_links_category ON fix_links(error_category);

-- the decisive lines of the linked errors, searchable: a new error finds the fixes of similar ones
CREATE VIRTUAL TABLE fix_errors_fts USING fts5(excerpt, tokenize = 'porter unicode61');
CREATE TRIGGER fix_links_ai AFTER INSERT ON fix_links WHEN new.error_message IS NOT NULL BEGIN
    INSERT INTO fix_errors_fts(rowid, excerpt) VALUES (new.id, new.error_message);
END;
CREATE TRIGGER fix_links_ad AFTER DELETE ON fix_links BEGIN
    DELETE FROM fix_errors_fts WHERE rowid = old.id;
END;

-- the advice on_task_error gave (access_type 'advised') remembers the error it was for, so a
-- later apply(memory_id, task_id=...) credits the link of that error
ALTER TABLE memory_access_log ADD COLUMN error_signature TEXT;
CREATE INDEX ix_access_log_task ON memory_access_log(task_id, memory_id);

-- every foreign key has an index: deleting a memory must not scan the table for rows that
-- point at it (consolidated_into had none: bulk deletes were quadratic)
CREATE INDEX IF NOT EXISTS ix_memories_consolidated_into ON memories(consolidated_into);

-- fixes of the same kind (the fix text masked like an error message) aggregate into one
ALTER TABLE memories ADD COLUMN fix_kind TEXT;
CREATE INDEX ix_memories_fix_kind ON memories(fix_kind);
-- what was signed (JSON: the decisive message, key frame, exception, category, excerpt), so a
-- later signing method can re-sign stored rows (the `resign` maintenance job)
ALTER TABLE memories ADD COLUMN error_basis TEXT CHECK (error_basis IS NULL OR json_valid(error_basis));
ALTER TABLE task_attempts ADD COLUMN error_basis TEXT CHECK (error_basis IS NULL OR json_valid(error_basis));
CREATE INDEX ix_memories_error_signature ON memories(error_signature);
CREATE INDEX ix_task_attempts_signature ON task_attempts(error_signature);

-- every success memory taught with an error before this migration is a fix that worked once
INSERT OR IGNORE INTO fix_links(memory_id, error_signature, error_category, error_message, worked, first_at, last_at)
SELECT id, error_signature, json_extract(metadata, '$.error_category'), error_template, 1, created_at, updated_at
FROM memories WHERE memory_type = 'success' AND error_signature IS NOT NULL;

-- the signing method the stored signatures were made with (1: v0.1; the resign job moves it on)
CREATE TABLE signature_state (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    method     INTEGER NOT NULL,
    updated_at REAL NOT NULL
);
INSERT INTO signature_state(id, method, updated_at)
SELECT 1, 1, COALESCE((SELECT MAX(updated_at) FROM error_templates), 0)
WHERE EXISTS (SELECT 1 FROM error_templates);
