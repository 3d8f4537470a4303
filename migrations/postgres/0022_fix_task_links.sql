-- 0022_fix_task_links (issue 19; PostgreSQL): see migrations/0022_fix_task_links.sql. A fix's link keeps
-- the task signature it was taught for; the advice's access-log rows keep it too. IF NOT EXISTS: the step
-- may be replayed (idempotent).
ALTER TABLE fix_links ADD COLUMN IF NOT EXISTS task_signature TEXT;
CREATE INDEX IF NOT EXISTS ix_fix_links_task ON fix_links(task_signature) WHERE task_signature IS NOT NULL;
ALTER TABLE memory_access_log ADD COLUMN IF NOT EXISTS task_signature TEXT;
