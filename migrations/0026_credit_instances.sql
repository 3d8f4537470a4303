-- 0026_credit_instances (issue 19): an advice's access-log rows, and the apply() credits given after it, also keep
-- the decisive line of the error the advice was for (fixes.link_text without its key frame, whitespace folded, at
-- most 1,000 characters). One signature is shared by unrelated failures (an assertion's values masked); a fix
-- refuted for one instance of it was refuted for errors like that instance, not for every error of the signature:
-- the fix ranking compares the asked error with the instance each unhelpful credit was given for
-- (docs/fixes.md, "Refuted for another instance"). NULL: given before this step, or without the error.
-- Twin: migrations/postgres/0026_credit_instances.sql.
ALTER TABLE memory_access_log ADD COLUMN error_line TEXT;
