-- A job run stopped by a signal (SIGINT, SIGTERM) is recorded as 'interrupted' with the counts
-- of the batches it committed. SQLite cannot change a CHECK constraint: the table is rebuilt.
DROP VIEW v_job_runs;
CREATE TABLE job_runs_next (
    id          INTEGER PRIMARY KEY,
    job         TEXT NOT NULL,
    started_at  REAL NOT NULL,
    finished_at REAL,
    status      TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'skipped', 'interrupted')),
    counts      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(counts)),
    error       TEXT,
    holder      TEXT NOT NULL
);
INSERT INTO job_runs_next(id, job, started_at, finished_at, status, counts, error, holder)
    SELECT id, job, started_at, finished_at, status, counts, error, holder FROM job_runs;
DROP TABLE job_runs;
ALTER TABLE job_runs_next RENAME TO job_runs;
CREATE INDEX ix_job_runs_job ON job_runs(job, started_at);
CREATE VIEW v_job_runs AS
SELECT job, status, datetime(started_at, 'unixepoch') AS started, ROUND(finished_at - started_at, 3) AS seconds,
       counts, error, holder
FROM job_runs ORDER BY started_at DESC;
