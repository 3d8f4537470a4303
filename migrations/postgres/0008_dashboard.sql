-- 0008_dashboard (PostgreSQL; the SQLite step of the same name has the same views): the per-week views behind the dashboard's plots (docs/metrics.md,
-- docs/dashboard.md) and an index for their time windows. A week starts on Monday 00:00 UTC
-- (345600 s after the epoch, a Thursday); week_start is UNIX seconds.
CREATE INDEX ix_task_attempts_time ON task_attempts(attempted_at);
-- an earlier sighting of a signature: an index range per failure (the repeat-failure rate)
CREATE INDEX ix_task_attempts_sig_time ON task_attempts(error_signature, attempted_at);
-- memories created per week by type and agent, read from the index alone
CREATE INDEX ix_memories_created_at ON memories(created_at, memory_type, agent_id);
-- the few archived and pinned memories, counted without a table scan
CREATE INDEX ix_memories_archived ON memories(archived) WHERE archived = 1;
CREATE INDEX ix_memories_pinned ON memories(pinned) WHERE pinned = 1;
-- helpfulness per week: the applied rows only (the access log is the largest table)
CREATE INDEX ix_access_log_applied ON memory_access_log(timestamp, was_helpful) WHERE access_type = 'applied';

-- a failure: a task meeting an error signature (the first attempt the task made at it);
-- repeated: another task met the same signature before
CREATE VIEW v_task_errors AS
SELECT f.task_id, f.error_signature, f.error_category, f.first_at,
       CASE WHEN EXISTS (SELECT 1 FROM task_attempts p WHERE p.error_signature = f.error_signature
                         AND p.attempted_at < f.first_at AND p.task_id <> f.task_id) THEN 1 ELSE 0 END AS repeated
FROM (SELECT task_id, error_signature, MAX(error_category) AS error_category, MIN(attempted_at) AS first_at
      FROM task_attempts WHERE error_signature IS NOT NULL GROUP BY task_id, error_signature) f;

CREATE VIEW v_failures_by_week AS
SELECT FLOOR((first_at - 345600) / 604800) * 604800 + 345600 AS week_start,
       COUNT(*) AS failures, SUM(repeated) AS repeated, ROUND((1.0 * SUM(repeated) / COUNT(*))::numeric, 4) AS repeat_rate
FROM v_task_errors GROUP BY 1 ORDER BY 1;

-- per task: its interventions (attempts other than an escalation), fixed or not, escalated or not
CREATE VIEW v_tasks AS
SELECT task_id, MIN(attempted_at) AS first_at, MAX(attempted_at) AS last_at,
       SUM(CASE WHEN result <> 'escalated' THEN 1 ELSE 0 END) AS attempts,
       MAX(CASE WHEN result IN ('fixed', 'decomposed') THEN 1 ELSE 0 END) AS fixed,
       MAX(CASE WHEN result = 'escalated' THEN 1 ELSE 0 END) AS escalated
FROM task_attempts GROUP BY task_id;

-- the learning curve: retries per task, by the week of the task's first attempt
CREATE VIEW v_retries_by_week AS
SELECT FLOOR((first_at - 345600) / 604800) * 604800 + 345600 AS week_start,
       COUNT(*) AS tasks, SUM(attempts) AS attempts, ROUND((1.0 * SUM(attempts) / COUNT(*))::numeric, 4) AS retries_per_task,
       SUM(fixed) AS fixed, SUM(escalated) AS escalated
FROM v_tasks GROUP BY 1 ORDER BY 1;

CREATE VIEW v_techniques_by_week AS
SELECT FLOOR((attempted_at - 345600) / 604800) * 604800 + 345600 AS week_start,
       SUM(CASE WHEN result <> 'escalated' THEN 1 ELSE 0 END) AS attempts,
       SUM(CASE WHEN result IN ('fixed', 'decomposed') THEN 1 ELSE 0 END) AS successes,
       SUM(CASE WHEN result = 'escalated' THEN 1 ELSE 0 END) AS escalations
FROM task_attempts GROUP BY 1 ORDER BY 1;

-- helpfulness of applied memories: apply() calls that said helpful
CREATE VIEW v_helpfulness_by_week AS
SELECT FLOOR((timestamp - 345600) / 604800) * 604800 + 345600 AS week_start,
       COUNT(*) AS applied, SUM(CASE WHEN was_helpful = 1 THEN 1 ELSE 0 END) AS helpful,
       ROUND((1.0 * SUM(CASE WHEN was_helpful = 1 THEN 1 ELSE 0 END) / COUNT(*))::numeric, 4) AS helpfulness
FROM memory_access_log WHERE access_type = 'applied' GROUP BY 1 ORDER BY 1;

-- memories created per week, by type and agent (rows still stored: forgotten ones are gone)
CREATE VIEW v_memories_by_week AS
SELECT FLOOR((created_at - 345600) / 604800) * 604800 + 345600 AS week_start,
       memory_type, agent_id, COUNT(*) AS created
FROM memories GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
