-- A job run stopped by a signal (SIGINT, SIGTERM) is recorded as 'interrupted' with the counts
-- of the batches it committed.
ALTER TABLE job_runs DROP CONSTRAINT IF EXISTS job_runs_status_check;
ALTER TABLE job_runs ADD CONSTRAINT job_runs_status_check
    CHECK (status IN ('running', 'ok', 'failed', 'skipped', 'interrupted'));
