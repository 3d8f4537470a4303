-- 0023_fix_origin_links (issue 19): a fix's link to an error also keeps the error's *origin*, where the
-- failing run started (the outermost application frame of its stack trace: reproduce.py, a test class),
-- read from the error text itself; so advice can rank "fixed failures that started in this same script
-- before" when the harness gives no task, as a failure that recurs in one script after each edit keeps
-- its origin while its message changes. The advice's access-log rows keep it too, so an apply() credit
-- after an origin-level advice lands on a link of that origin. NULL: no stack trace, or taught before.
-- Twin: migrations/postgres/0023_fix_origin_links.sql.
ALTER TABLE fix_links ADD COLUMN error_origin TEXT;
CREATE INDEX ix_fix_links_origin ON fix_links(error_origin) WHERE error_origin IS NOT NULL;
ALTER TABLE memory_access_log ADD COLUMN error_origin TEXT;
