-- 0025_credit_origins_index (issue 19; PostgreSQL): see migrations/0025_credit_origins_index.sql. A covering partial
-- index over the apply() credits, which the fix ranking reads per fix memory. IF NOT EXISTS: the step may be replayed.
CREATE INDEX IF NOT EXISTS ix_access_log_credits
    ON memory_access_log(memory_id, error_signature, error_origin, was_helpful) WHERE access_type = 'applied';
