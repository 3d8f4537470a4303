-- 0003_error_templates: the online error-template miner's state, shared by every process.
-- A template's signature id is issued when it is created and never changes, even when the
-- template generalises; two templates found to be one group are linked, not renamed.
CREATE TABLE error_templates (
    id         INTEGER PRIMARY KEY,
    sig        TEXT NOT NULL UNIQUE,
    partition  TEXT NOT NULL,
    tokens     TEXT NOT NULL CHECK (json_valid(tokens)),
    category   TEXT NOT NULL,
    exception  TEXT,
    seen       INTEGER NOT NULL DEFAULT 1,
    rev        INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX ix_error_templates_partition ON error_templates(partition);
CREATE INDEX ix_error_templates_rev ON error_templates(rev);

CREATE TABLE error_signature_links (
    sig       TEXT PRIMARY KEY,
    canonical TEXT NOT NULL,
    linked_at REAL NOT NULL
);
CREATE INDEX ix_error_signature_links_canonical ON error_signature_links(canonical);
