-- 0023_fix_origin_links (issue 19; PostgreSQL): see migrations/0023_fix_origin_links.sql. A fix's link
-- keeps the origin of its error (where the failing run started); the advice's access-log rows keep it
-- too. IF NOT EXISTS: the step may be replayed (idempotent).
ALTER TABLE fix_links ADD COLUMN IF NOT EXISTS error_origin TEXT;
CREATE INDEX IF NOT EXISTS ix_fix_links_origin ON fix_links(error_origin) WHERE error_origin IS NOT NULL;
ALTER TABLE memory_access_log ADD COLUMN IF NOT EXISTS error_origin TEXT;
