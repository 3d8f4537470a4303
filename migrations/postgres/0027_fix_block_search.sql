-- 0027_fix_block_search (issue 19; PostgreSQL): see migrations/0027_fix_block_search.sql. The failure blocks of the
-- linked errors as a generated tsvector (kept in step with fix_links.error_instance by the server) and its GIN index.
-- IF NOT EXISTS: the step may be replayed.
ALTER TABLE fix_links ADD COLUMN IF NOT EXISTS instance_tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('english', COALESCE(error_instance, ''))) STORED;
CREATE INDEX IF NOT EXISTS ix_fix_links_instance ON fix_links USING gin (instance_tsv);
