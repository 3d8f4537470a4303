-- 0024_keyword_lengths (issue 10; PostgreSQL): the keyword channel ranks by BM25 as SQLite's FTS5 does
-- (postgres_backend.keyword_search), which needs the mean document length. A document's length is its
-- number of positions in the tsvector (its words but the stop words); the vocabulary's row whose term
-- is '' (no lexeme is empty) holds their sum over the store, kept in step by every write with the other
-- rows. Counted here once from the stored tsvectors (a scan of memories_fts); idempotent.
INSERT INTO memories_fts_vocab(term, docs)
SELECT '', COALESCE(SUM(array_length(u.positions, 1)), 0) FROM memories_fts, unnest(doc) AS u
ON CONFLICT (term) DO UPDATE SET docs = excluded.docs;
