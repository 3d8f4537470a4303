-- 0017_sparse_indexes (issue 17; PostgreSQL, the indexes of SQLite's step of the same name; its FTS5 setting
-- has no counterpart here): three indexes of memories on
-- columns that are NULL for most rows held an entry for every row, which every insert and delete
-- paid for; every query on them (and the consolidated_into foreign key's action) compares the
-- column, which a partial index without the NULLs serves the same.
DROP INDEX IF EXISTS ix_memories_fix_kind;
CREATE INDEX ix_memories_fix_kind ON memories(fix_kind) WHERE fix_kind IS NOT NULL;
DROP INDEX IF EXISTS ix_memories_error_signature;
CREATE INDEX ix_memories_error_signature ON memories(error_signature) WHERE error_signature IS NOT NULL;
DROP INDEX IF EXISTS ix_memories_consolidated_into;
CREATE INDEX ix_memories_consolidated_into ON memories(consolidated_into) WHERE consolidated_into IS NOT NULL;
