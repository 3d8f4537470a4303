-- 0011_tool_calls: the tool-call log (issue 14) and its per-tool metrics view.
-- One row per tool call an agent made: parameters (redacted JSON, bounded) and a summary of the
-- result (redacted, bounded; the full size kept), success, duration, and for a failed call its
-- error (redacted, bounded) with the error's signature, so "this tool fails with this error" is
-- learnable. uid is the identity that survives export/import. Pruned by the expire job
-- (maintenance.tool_call_retention_days).
CREATE TABLE tool_calls (
    id               INTEGER PRIMARY KEY,
    uid              TEXT NOT NULL UNIQUE,
    namespace        TEXT NOT NULL,
    agent_id         TEXT NOT NULL,
    session_id       TEXT,
    task_id          TEXT,
    tool_type        TEXT NOT NULL,
    tool_name        TEXT NOT NULL,
    parameters       TEXT CHECK (parameters IS NULL OR json_valid(parameters)),
    parameters_bytes INTEGER CHECK (parameters_bytes IS NULL OR parameters_bytes >= 0),
    result           TEXT,
    result_bytes     INTEGER CHECK (result_bytes IS NULL OR result_bytes >= 0),
    success          INTEGER NOT NULL CHECK (success IN (0, 1)),
    duration_ms      REAL CHECK (duration_ms IS NULL OR duration_ms >= 0),
    error            TEXT,
    error_signature  TEXT,
    error_category   TEXT,
    created_at       REAL NOT NULL
);
CREATE INDEX ix_tool_calls_agent ON tool_calls(agent_id, created_at);
CREATE INDEX ix_tool_calls_tool ON tool_calls(tool_name, created_at);
CREATE INDEX ix_tool_calls_task ON tool_calls(task_id) WHERE task_id IS NOT NULL;
CREATE INDEX ix_tool_calls_signature ON tool_calls(error_signature) WHERE error_signature IS NOT NULL;
CREATE INDEX ix_tool_calls_namespace ON tool_calls(namespace, created_at);
CREATE INDEX ix_tool_calls_created ON tool_calls(created_at);

-- Per tool: calls, success rate, p50/p95 duration (nearest rank over the calls with a duration)
-- and the last failure. Window functions only: the same query on both engines (docs/tool_calls.md).
CREATE VIEW v_tool_metrics AS
WITH ranked AS (
    SELECT tool_type, tool_name, duration_ms,
           ROW_NUMBER() OVER (PARTITION BY tool_type, tool_name ORDER BY duration_ms) AS rn,
           COUNT(*) OVER (PARTITION BY tool_type, tool_name) AS n
    FROM tool_calls WHERE duration_ms IS NOT NULL
), pct AS (
    SELECT tool_type, tool_name, MIN(CASE WHEN rn >= 0.5 * n THEN duration_ms END) AS p50_ms,
           MIN(CASE WHEN rn >= 0.95 * n THEN duration_ms END) AS p95_ms
    FROM ranked GROUP BY tool_type, tool_name
), agg AS (
    SELECT tool_type, tool_name, COUNT(*) AS calls, SUM(success) AS successes,
           MAX(CASE WHEN success = 0 THEN created_at END) AS last_failure_at
    FROM tool_calls GROUP BY tool_type, tool_name
)
SELECT a.tool_type, a.tool_name, a.calls, a.successes, a.calls - a.successes AS failures,
       ROUND(1.0 * a.successes / a.calls, 4) AS success_rate, p.p50_ms, p.p95_ms, a.last_failure_at,
       (SELECT t.error_signature FROM tool_calls t WHERE t.tool_type = a.tool_type AND t.tool_name = a.tool_name
        AND t.success = 0 ORDER BY t.created_at DESC, t.id DESC LIMIT 1) AS last_error_signature
FROM agg a LEFT JOIN pct p ON p.tool_type = a.tool_type AND p.tool_name = a.tool_name
ORDER BY a.calls DESC, a.tool_name;
