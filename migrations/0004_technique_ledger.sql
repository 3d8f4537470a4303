-- 0004_technique_ledger: per-task attempt history and the technique-effectiveness ledger.
CREATE TABLE task_attempts (
    id              INTEGER PRIMARY KEY,
    task_id         TEXT NOT NULL,
    technique       TEXT NOT NULL,
    result          TEXT NOT NULL CHECK (result IN ('fixed', 'failed', 'decomposed', 'escalated')),
    error_signature TEXT,
    error_category  TEXT,
    agent_id        TEXT,
    agent_type      TEXT,
    task_category   TEXT,
    notes           TEXT,
    attempted_at    REAL NOT NULL
);
CREATE INDEX ix_task_attempts_task ON task_attempts(task_id, id);

-- One row per technique and error key, at three levels: the exact error signature, its
-- category, and overall ('*'). Selection borrows strength from the coarser levels.
CREATE TABLE technique_effectiveness (
    id                INTEGER PRIMARY KEY,
    technique         TEXT NOT NULL,
    level             TEXT NOT NULL CHECK (level IN ('signature', 'category', 'global')),
    error_key         TEXT NOT NULL,
    error_category    TEXT,
    successes         INTEGER NOT NULL DEFAULT 0 CHECK (successes >= 0),
    failures          INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    attempts          INTEGER NOT NULL DEFAULT 0 CHECK (attempts = successes + failures),
    success_rate      REAL,
    agent_types       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(agent_types)),
    task_categories   TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(task_categories)),
    example_successes TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(example_successes)),
    example_failures  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(example_failures)),
    first_used        REAL NOT NULL,
    last_used         REAL NOT NULL,
    last_success      REAL,
    last_failure      REAL,
    UNIQUE (technique, level, error_key)
);
CREATE INDEX ix_technique_eff_key ON technique_effectiveness(level, error_key);

CREATE VIEW task_history AS
SELECT task_id,
       COUNT(*) AS interventions,
       json_group_array(technique) AS techniques_tried,
       MAX(CASE WHEN result IN ('fixed', 'decomposed') THEN technique END) AS successful_technique,
       MIN(attempted_at) AS first_attempt,
       MAX(attempted_at) AS last_attempt
FROM task_attempts GROUP BY task_id;
