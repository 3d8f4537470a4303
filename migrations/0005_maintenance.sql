-- 0005_maintenance: job runs and leases, consolidation links, metrics views.
CREATE TABLE job_runs (
    id          INTEGER PRIMARY KEY,
    job         TEXT NOT NULL,
    started_at  REAL NOT NULL,
    finished_at REAL,
    status      TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'skipped')),
    counts      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(counts)),
    error       TEXT,
    holder      TEXT NOT NULL
);
CREATE INDEX ix_job_runs_job ON job_runs(job, started_at);

-- One row per job while a process runs it; a crashed holder's lease expires.
CREATE TABLE job_leases (
    job         TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    acquired_at REAL NOT NULL,
    expires_at  REAL NOT NULL
);

-- Members of consolidated pattern memories.
CREATE TABLE pattern_members (
    pattern_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    member_id  INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    similarity REAL NOT NULL,
    added_at   REAL NOT NULL,
    PRIMARY KEY (pattern_id, member_id)
) WITHOUT ROWID;
CREATE INDEX ix_pattern_members_member ON pattern_members(member_id);

-- Metrics views (documented in docs/metrics.md).
CREATE VIEW v_memories_by_agent_type AS
SELECT namespace, agent_id, memory_type, COUNT(*) AS memories, SUM(archived) AS archived,
       ROUND(AVG(relevance_score), 4) AS avg_relevance, ROUND(AVG(success_rate), 4) AS avg_success_rate,
       SUM(times_applied) AS times_applied
FROM memories GROUP BY namespace, agent_id, memory_type;

CREATE VIEW v_effective_memories AS
SELECT id, namespace, agent_id, memory_type, content, times_applied, times_successful, success_rate, relevance_score
FROM memories WHERE times_applied >= 3 ORDER BY success_rate DESC, times_applied DESC;

CREATE VIEW v_technique_summary AS
SELECT technique, level, error_key, attempts, successes, failures, ROUND(success_rate, 4) AS success_rate,
       datetime(last_used, 'unixepoch') AS last_used
FROM technique_effectiveness ORDER BY level, error_key, success_rate DESC;

CREATE VIEW v_access_by_day AS
SELECT date(timestamp, 'unixepoch') AS day, access_type, COUNT(*) AS accesses
FROM memory_access_log WHERE timestamp >= unixepoch('now') - 30 * 86400
GROUP BY day, access_type ORDER BY day, access_type;

CREATE VIEW v_recall_to_success AS
SELECT m.memory_type,
       SUM(l.access_type = 'query') AS recalled,
       SUM(l.access_type = 'applied') AS applied,
       SUM(l.access_type = 'applied' AND l.was_helpful = 1) AS applied_helpfully,
       ROUND(1.0 * SUM(l.access_type = 'applied' AND l.was_helpful = 1)
             / NULLIF(SUM(l.access_type = 'query'), 0), 4) AS recall_to_success
FROM memory_access_log l JOIN memories m ON m.id = l.memory_id GROUP BY m.memory_type;

CREATE VIEW v_job_runs AS
SELECT job, status, datetime(started_at, 'unixepoch') AS started, ROUND(finished_at - started_at, 3) AS seconds,
       counts, error, holder
FROM job_runs ORDER BY started_at DESC;
