"""The keyword channel ranks by BM25 on both engines (issue 10: the same ranking, another engine).

SQLite's FTS5 ranks with ``bm25()``; PostgreSQL computes the same formula over its tsvector (the
term's weighted frequency, the document's length against the store's mean, kept in step as the
vocabulary's ``''`` row). Checked against a reference BM25 written out here, on texts whose words
both engines' stemmers leave apart and with no stop words (which only PostgreSQL drops)."""

from __future__ import annotations

import math
import re

import pytest

from harness_memory import MemoryStore

K1, B = 1.2, 0.75
TEXTS = [
    ("kafka broker rebalance stalled consumer lag", ["kafka"]),
    ("kafka consumer lag grew amid broker rebalance kafka kafka", ["broker"]),
    ("redis cache eviction storm", ["redis", "cache"]),
    ("cache warmup fixed cold redis latency spike post deploy", ["latency"]),
    ("terraform plan drift", ["terraform"]),
    ("terraform state lock held past crash terraform unlock fixed", ["state"]),
    ("gradle daemon crash heap", ["gradle"]),
    ("heap dump showed gradle daemon leak plugin cache today", ["heap", "plugin"]),
    ("postgres vacuum bloat", ["postgres"]),
    ("webpack bundle split chunk", ["webpack"]),
    ("flaky selenium timeout grid", ["selenium"]),
    ("docker layer cache miss rebuild", ["docker", "cache"]),
]
QUERIES = [
    "kafka lag",
    "redis cache latency",
    "terraform crash",
    "gradle heap plugin",
    "cache",
    "selenium grid timeout",
]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def reference(query: str) -> list[tuple[str, float]]:
    """BM25 as FTS5 computes it: a term's frequency weighted 1 in the content and 0.5 in the tags,
    a document's length its words, IDF ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6."""
    docs = [(_words(c), [w for t in tags for w in _words(t)]) for c, tags in TEXTS]
    n_docs = len(docs)
    avgdl = sum(len(c) + len(t) for c, t in docs) / n_docs
    out = []
    for (content, _tags), (c, t) in zip(TEXTS, docs, strict=True):
        score = 0.0
        for term in dict.fromkeys(_words(query)):
            hits = sum(1 for dc, dt in docs if term in dc or term in dt)
            if not hits:
                continue
            idf = max(1e-6, math.log((n_docs - hits + 0.5) / (hits + 0.5)))
            tf = c.count(term) + 0.5 * t.count(term)
            if tf:
                score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * (len(c) + len(t)) / avgdl))
        if score > 0:
            out.append((content, score))
    return sorted(out, key=lambda x: -x[1])


@pytest.mark.parametrize("query", QUERIES)
def test_the_keyword_channel_ranks_by_bm25(store, query):
    ids = {store.remember(c, type="success", agent_id="a", tags=tags).id: c for c, tags in TEXTS}
    got = store._core.backend.keyword_search(query, "m.namespace = ?", ("default",), 20)
    want = reference(query)
    assert [ids[i] for i, _ in got] == [c for c, _ in want]
    for (_, s), (_, w) in zip(got, want, strict=True):
        assert s == pytest.approx(w, rel=1e-6)


@pytest.fixture
def pg_url():
    import pgtestdb

    url, schema = pgtestdb.new_schema()
    yield url
    pgtestdb.drop_schema(schema)


def _lengths(s: MemoryStore) -> tuple[int, int]:
    """The vocabulary's '' row and a recount of the stored documents' positions."""
    b = s._core.backend
    row = b.execute("SELECT docs FROM memories_fts_vocab WHERE term = ''").fetchone()
    recount = b.execute("SELECT SUM(array_length(u.positions, 1)) FROM memories_fts, unnest(doc) AS u").fetchone()[0]
    return (row[0] if row else None), recount


def test_the_mean_length_follows_writes_updates_and_deletes_on_postgresql(pg_url):
    with MemoryStore(pg_url) as s:
        m = s.remember("kafka broker rebalance stalled", type="success", agent_id="a", key="k")
        s.remember_many(
            [{"content": f"redis cache eviction storm {w}", "agent_id": "a", "type": "success"} for w in ("one", "two")]
        )
        s.remember(
            "kafka broker rebalance stalled twice over the weekend", type="success", agent_id="a", key="k"
        )  # re-indexed
        other = s.remember("terraform plan drift", type="success", agent_id="a", tags=["terraform", "drift"])
        total, recount = _lengths(s)
        assert total == recount > 0
        s.forget(other.id)
        total, recount = _lengths(s)
        assert total == recount > 0
        assert s.get(m.id).content.endswith("weekend")


def test_migration_0024_counts_the_lengths_of_a_store_written_before_it(pg_url):
    import psycopg

    with MemoryStore(pg_url) as s:
        s.remember_many([{"content": c, "agent_id": "a", "tags": t, "type": "success"} for c, t in TEXTS])
    with psycopg.connect(pg_url, autocommit=True) as c:  # the store as step 0023 left it
        c.execute("DELETE FROM memories_fts_vocab WHERE term = ''")
        c.execute("DELETE FROM schema_migrations WHERE name >= '0024_keyword_lengths'")
    with MemoryStore(pg_url) as s:
        total, recount = _lengths(s)
        assert total == recount == sum(len(_words(c)) + len(t) for c, t in TEXTS)
