-- 0002_fts_vocab: document frequencies of the keyword index's (stemmed) terms, used by
-- recall to skip near-universal query terms whose postings cost time and add no ranking signal.
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row');
