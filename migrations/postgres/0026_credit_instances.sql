-- 0026_credit_instances (issue 19; PostgreSQL): see migrations/0026_credit_instances.sql. The advice's and the
-- credits' access-log rows keep the decisive line of the error they were for. IF NOT EXISTS: the step may be replayed.
ALTER TABLE memory_access_log ADD COLUMN IF NOT EXISTS error_line TEXT;
