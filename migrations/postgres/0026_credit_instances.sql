-- 0026_credit_instances (issue 19; PostgreSQL): see migrations/0026_credit_instances.sql. A fix's link keeps the
-- failure block of the error it was taught for; an advice's and a credit's access-log rows keep its decisive line and
-- failure block. IF NOT EXISTS: the step may be replayed.
ALTER TABLE memory_access_log ADD COLUMN IF NOT EXISTS error_line TEXT;
ALTER TABLE memory_access_log ADD COLUMN IF NOT EXISTS error_instance TEXT;
ALTER TABLE fix_links ADD COLUMN IF NOT EXISTS error_instance TEXT;
