-- 0017_sparse_indexes (issue 17): three indexes of memories on columns that are NULL for most rows
-- (a fix's kind, an error signature, the pattern a memory was consolidated into) held an entry for
-- every row, NULLs included, which every insert and delete paid for. Every query on them (and the
-- consolidated_into foreign key's ON DELETE action) compares the column (=, IN, IS NOT NULL), which
-- a partial index without the NULLs serves the same: each is rebuilt as one.
DROP INDEX IF EXISTS ix_memories_fix_kind;
CREATE INDEX ix_memories_fix_kind ON memories(fix_kind) WHERE fix_kind IS NOT NULL;
DROP INDEX IF EXISTS ix_memories_error_signature;
CREATE INDEX ix_memories_error_signature ON memories(error_signature) WHERE error_signature IS NOT NULL;
DROP INDEX IF EXISTS ix_memories_consolidated_into;
CREATE INDEX ix_memories_consolidated_into ON memories(consolidated_into) WHERE consolidated_into IS NOT NULL;

-- The keyword index no longer rewrites a segment as soon as a tenth of its rows are deleted (FTS5's
-- 'deletemerge', 10 by default): during a bulk delete that rewrite fell inside one batch's write
-- transaction and held the lock for over a second at 100k memories (issue 17). Deleted rows stay
-- tombstoned (never matched) until the compact job's bounded merge steps rewrite their segments.
INSERT INTO memories_fts(memories_fts, rank) VALUES ('deletemerge', 0);
