-- 0022_fix_task_links (issue 19): a fix's link to an error also keeps the task it was taught for (the
-- task signature of the failed task: a harness always knows what it was running), so advice can rank
-- "fixed this same task before" beside "fixed this same error before"; the advice's access-log rows keep
-- the task signature too, so an apply() credit after a task-level advice lands on a link of that task.
-- NULL: taught without a task. Twin: migrations/postgres/0022_fix_task_links.sql.
ALTER TABLE fix_links ADD COLUMN task_signature TEXT;
CREATE INDEX ix_fix_links_task ON fix_links(task_signature) WHERE task_signature IS NOT NULL;
ALTER TABLE memory_access_log ADD COLUMN task_signature TEXT;
