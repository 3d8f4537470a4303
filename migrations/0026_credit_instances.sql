-- 0026_credit_instances (issue 19): which *instance* of its signature an error was. A fix's link keeps the failure
-- block of the error it was first taught for (beside the decisive line it kept already), and an advice's access-log
-- rows, and the apply() credits given after it, keep the decisive line and the failure block of the error they were
-- for (fixes.instance_line, fixes.instance_text: ErrorSignature.message and .excerpt, the decisive line with its few
-- lines of detail, a stack trace's frames; whitespace folded, at most 500 characters each). One signature is
-- shared by unrelated failures (an assertion's values masked); a fix refuted for one instance of it was refuted for
-- errors like that instance, not for every error of the signature: the fix ranking compares the asked error with the
-- instance each unhelpful credit was given for and the one the fix worked for (docs/fixes.md, "Refuted for another
-- instance"). NULL: written before this step, or without the error.
-- Twin: migrations/postgres/0026_credit_instances.sql.
ALTER TABLE memory_access_log ADD COLUMN error_line TEXT;
ALTER TABLE memory_access_log ADD COLUMN error_instance TEXT;
ALTER TABLE fix_links ADD COLUMN error_instance TEXT;
