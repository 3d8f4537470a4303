-- 0002_fts_vocab (PostgreSQL): document frequencies of the keyword index's (stemmed) terms, as
-- SQLite's fts5vocab table gives them: IDFs for recall's confidence without counting postings.
-- Kept in step by postgres_backend.index_text()/unindex_text() in the same statement as the
-- tsvector row.
CREATE TABLE memories_fts_vocab (
    term TEXT PRIMARY KEY,
    docs BIGINT NOT NULL
);
