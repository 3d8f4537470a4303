-- 0025_credit_origins_index (issue 19): apply() credits now log the error they were given for and its origin, and the
-- fix ranking reads them per fix memory (fixes._local_evidence: a credit is evidence where it was given). A covering
-- partial index over the credits alone, so that read does not walk every advice row a memory collected (measured by
-- a review: 200,000 access-log rows, one rank() 51 ms without it, 6 ms with it). Twin:
-- migrations/postgres/0025_credit_origins_index.sql.
CREATE INDEX ix_access_log_credits ON memory_access_log(memory_id, error_signature, error_origin, was_helpful)
    WHERE access_type = 'applied';
