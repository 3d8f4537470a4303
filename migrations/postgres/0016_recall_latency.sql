-- 0016_recall_latency (issue 13; PostgreSQL, the SQLite step of the same name has the same views):
-- how long each recall took, kept in the access log, for the dashboard's recall latency p50/p95
-- (docs/metrics.md). A recall logs one 'query' row per hit; the first of them (its top hit)
-- carries the recall's wall time in milliseconds, the others NULL: one duration per recall.
ALTER TABLE memory_access_log ADD COLUMN duration_ms DOUBLE PRECISION CHECK (duration_ms IS NULL OR duration_ms >= 0);
CREATE INDEX ix_access_log_duration ON memory_access_log(timestamp, duration_ms) WHERE duration_ms IS NOT NULL;

CREATE VIEW v_recall_latency AS
SELECT memory_id AS top_memory_id, agent_id, session_id, task_id, timestamp, duration_ms
FROM memory_access_log WHERE duration_ms IS NOT NULL;

CREATE VIEW v_recall_latency_by_week AS
WITH ranked AS (
    SELECT FLOOR((timestamp - 345600) / 604800) * 604800 + 345600 AS week_start, duration_ms,
           ROW_NUMBER() OVER (PARTITION BY FLOOR((timestamp - 345600) / 604800) ORDER BY duration_ms) AS rn,
           COUNT(*) OVER (PARTITION BY FLOOR((timestamp - 345600) / 604800)) AS n
    FROM memory_access_log WHERE duration_ms IS NOT NULL
)
SELECT week_start, COUNT(*) AS recalls,
       MIN(CASE WHEN rn >= 0.5 * n THEN duration_ms END) AS p50_ms,
       MIN(CASE WHEN rn >= 0.95 * n THEN duration_ms END) AS p95_ms,
       MAX(duration_ms) AS max_ms
FROM ranked GROUP BY week_start ORDER BY week_start;
