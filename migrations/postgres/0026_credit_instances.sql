-- 0026_credit_instances (issue 19; PostgreSQL): see migrations/0026_credit_instances.sql. A fix's link, an advice's
-- and a credit's access-log rows keep the failure block of the error they were for. IF NOT EXISTS: the step may be
-- replayed.
ALTER TABLE memory_access_log ADD COLUMN IF NOT EXISTS error_instance TEXT;
ALTER TABLE fix_links ADD COLUMN IF NOT EXISTS error_instance TEXT;
