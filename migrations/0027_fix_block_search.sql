-- 0027_fix_block_search (issue 19): the failure blocks of the linked errors, searchable. A new error finds the fixes of
-- linked errors whose decisive line is nearly its own (fix_errors_fts, 0006) or whose failure block is (this table:
-- fix_links.error_instance, the decisive line with its few lines of detail, a stack trace's frames; 0026). Two failures
-- of one script worded differently (`IndentationError: unexpected indent`, `NameError: name 'x' is not defined`) share
-- their frames; the fix ranking compares the blocks' word sets (fixes.rank, Settings.fix_similar_min) and offers only
-- fixes that carried over between errors (Settings.fix_similar_breadth). The link keeps the first block it was given
-- (a NULL one is filled by a later teaching or an import): the triggers follow every change. Existing links are indexed
-- here. Twin: migrations/postgres/0027_fix_block_search.sql.
CREATE VIRTUAL TABLE fix_blocks_fts USING fts5(block, tokenize = 'porter unicode61');
INSERT INTO fix_blocks_fts(rowid, block) SELECT id, error_instance FROM fix_links WHERE error_instance IS NOT NULL;
CREATE TRIGGER fix_links_block_ai AFTER INSERT ON fix_links WHEN new.error_instance IS NOT NULL BEGIN
    INSERT INTO fix_blocks_fts(rowid, block) VALUES (new.id, new.error_instance);
END;
CREATE TRIGGER fix_links_block_au AFTER UPDATE OF error_instance ON fix_links
    WHEN old.error_instance IS NOT new.error_instance BEGIN
    DELETE FROM fix_blocks_fts WHERE rowid = old.id;
    INSERT INTO fix_blocks_fts(rowid, block) SELECT new.id, new.error_instance WHERE new.error_instance IS NOT NULL;
END;
CREATE TRIGGER fix_links_block_ad AFTER DELETE ON fix_links BEGIN
    DELETE FROM fix_blocks_fts WHERE rowid = old.id;
END;
-- the document count of each term of both indexes: a search for similar errors keeps its rarest words (a word every
-- failure block holds, `line`, `file`, would make it rank every link; SQLiteBackend._similar)
CREATE VIRTUAL TABLE fix_errors_vocab USING fts5vocab(fix_errors_fts, row);
CREATE VIRTUAL TABLE fix_blocks_vocab USING fts5vocab(fix_blocks_fts, row);
