"""The SQLite backend's own promises (issue 18), on real files: a new file opened while another process is
mid-write waits for it instead of failing, the keyword channel matches any of the query's words, and a
posting budget ranks only the newest documents of a word that is everywhere while a rare word is still
found in the oldest."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import note_items
from harness_memory import MemoryStore
from harness_memory.sqlite_backend import connect
from harness_memory.testing import FakeEmbedder

_HOLD_A_WRITE = """
import sqlean, sys, time
c = sqlean.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA busy_timeout = 5000")
c.execute("CREATE TABLE other_process(x)")
c.execute("BEGIN IMMEDIATE")
c.execute("INSERT INTO other_process VALUES (1)")
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")
"""


def test_a_new_file_another_process_is_writing_is_opened_once_that_write_commits(tmp_path):
    path = tmp_path / "shared.db"
    other = subprocess.Popen([sys.executable, "-c", _HOLD_A_WRITE, str(path), "0.5"], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "holding"
        # switching the file to WAL needs it alone: SQLite answers "locked" at once, the open retries
        conn = connect(path, busy_timeout_ms=5000)
        try:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
            assert conn.execute("SELECT x FROM other_process").fetchall() == [(1,)]  # after its commit
        finally:
            conn.close()
    finally:
        assert other.wait(timeout=30) == 0


def _word(i: int) -> str:
    """A word of its own for item ``i`` (letters only: digits do not tell near-duplicates apart)."""
    return "zq" + chr(97 + i // 676 % 26) + chr(97 + i // 26 % 26) + chr(97 + i % 26)


@pytest.fixture
def s(tmp_path):
    with MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(8)) as st:
        yield st


def test_the_keyword_channel_matches_any_of_the_query_words(s):
    runner = s.remember("the runner lost its network", type="failure", agent_id="a")
    cache = s.remember("a cold cache slows the build", type="failure", agent_id="a")
    s.remember("nothing in common here", type="failure", agent_id="a")
    hits = s.recall("runner cache", agent_id="a", channels={"keyword"}, record=False)
    assert {h.memory.id for h in hits} == {runner.id, cache.id}


def test_a_posting_budget_ranks_the_newest_documents_of_a_common_word_and_keeps_a_rare_one(s):
    n, budget = 200, 50
    items = [{**it, "content": f"deploy {_word(i)} " + it["content"]} for i, it in enumerate(note_items(n))]
    ids = [m.id for m in s.remember_many(items)]
    assert len(set(ids)) == n
    b = s._core.backend
    everything = b.keyword_search("deploy", "1 = 1", [], n)
    assert len(everything) == n  # without a budget every match is ranked
    newest = b.keyword_search("deploy", "1 = 1", [], n, posting_budget=budget)
    # "deploy" is in all 200: only about the newest 50 are ranked
    assert {i for i, _ in newest} == set(ids[n - budget :])
    # a rare word fits the budget alone: the common one is dropped and the oldest document found
    rare = b.keyword_search(f"deploy {_word(3)}", "1 = 1", [], 10, posting_budget=budget)
    assert [i for i, _ in rare] == [ids[3]]


def test_a_memory_rewritten_through_its_key_is_found_by_its_new_words_only(s):
    m = s.remember("the proxy blocks pip downloads", type="context", agent_id="a", key="k")
    again = s.remember("the mirror serves wheels now", type="context", agent_id="a", key="k")
    assert again.id == m.id
    assert s.recall("proxy blocks", agent_id="a", channels={"keyword"}, record=False) == []
    assert [h.memory.id for h in s.recall("mirror wheels", agent_id="a", channels={"keyword"}, record=False)] == [m.id]


def test_compact_merges_the_keyword_index_and_leaves_statistics_for_every_table(s):
    for it in note_items(120):  # one keyword-index segment per write
        s.remember(**it)
    b = s._core.backend
    pieces = b.execute("SELECT COUNT(*) FROM memories_fts_data").fetchone()[0]
    assert s.run_job("compact").status == "ok"
    assert b.execute("SELECT COUNT(*) FROM memories_fts_data").fetchone()[0] < pieces / 2
    assert [h.memory.content for h in s.recall("note 7:", agent_id="a1", channels={"keyword"}, limit=1)]
    # the planner's statistics: a row per index, and one for each table that has rows but no index
    stats = set(b.execute("SELECT tbl, idx FROM sqlite_stat1").fetchall())
    tables = {
        r[0]
        for r in b.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'")
        if not r[0].startswith("sqlite_")
    }
    indexed = {r[0] for r in b.execute("SELECT tbl_name FROM sqlite_master WHERE type = 'index'")}
    unindexed = {t for t in tables - indexed if b.execute(f'SELECT 1 FROM "{t}" LIMIT 1').fetchone()}
    assert "embedder_info" in unindexed
    assert unindexed <= {t for t, _ in stats}
    assert "memories" in {t for t, i in stats if i is not None}


def test_term_counts_are_read_afresh_once_the_store_shrank_or_grew_by_more_than_a_tenth(s):
    # past DF_CACHE_MIN documents the counts recall's confidence reads are reused while the store's size
    # stays within a tenth of what it was when they were read
    n_kept, n_gone = 1520, 180
    kept = [
        {**it, "content": f"{_word(i)} " + it["content"], "agent_id": "a", "thread_id": "t"}
        for i, it in enumerate(note_items(n_kept))
    ]
    gone = [
        {**it, "content": f"zebra crossing {_word(n_kept + i)} " + it["content"], "agent_id": "z", "thread_id": "t"}
        for i, it in enumerate(note_items(n_gone, seed=1))
    ]
    # events of a thread, kept as written (never merged as near duplicates)
    assert len({m.id for m in s.remember_many(kept) + s.remember_many(gone)}) == n_kept + n_gone
    b = s._core.backend
    assert b.keyword_search("zebra deploy", "1 = 1", [], 10, posting_budget=100)  # the channel's term counts
    assert b.term_frequencies(["zebra"]) == (n_kept + n_gone, {"zebra": n_gone})
    assert s.forget_all("z") == n_gone  # the newest 180 go: over a tenth fewer documents
    assert b.term_frequencies(["zebra"]) == (n_kept, {"zebra": 0})
    more = [{**it, "agent_id": "z", "thread_id": "t"} for it in gone[:n_gone]]  # then over a tenth more
    assert len(s.remember_many(more)) == n_gone
    assert b.term_frequencies(["zebra"]) == (n_kept + n_gone, {"zebra": n_gone})


def _ids(path, create: str, sizes: list[int], *, one_by_one: bool) -> list[int]:
    """Rows inserted through ``insert_returning`` in writes of the given sizes (each row alone, or
    the write's rows at once), the largest id deleted after the first write; the ids it returned,
    each checked against its stored row."""
    from harness_memory.sqlite_backend import SQLiteBackend

    b = SQLiteBackend(path)
    sql = "INSERT INTO t(v, w) VALUES (?, 'x') RETURNING id"
    try:
        with b.write() as c:
            c.execute(create)
        out: list[int] = []
        n = 0
        for k, size in enumerate(sizes):
            rows = [(n + i,) for i in range(size)]
            with b.write():
                got = [b.insert_returning(sql, [r])[0] for r in rows] if one_by_one else b.insert_returning(sql, rows)
            stored = dict(b.execute("SELECT v, id FROM t").fetchall())
            assert [stored[v] for v in range(n, n + size)] == got  # each id is its row's
            n += size
            out += got
            if k == 0:
                with b.write() as c:
                    c.execute("DELETE FROM t WHERE id = (SELECT MAX(id) FROM t)")
        return out
    finally:
        b.close()


@pytest.mark.parametrize(
    "create",
    [
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER, w TEXT)",
        "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v INTEGER, w TEXT)",  # ids never reused
        "CREATE TABLE t (id INTEGER NOT NULL DEFAULT (abs(random()) % 1000000000), v INTEGER, w TEXT)",  # no key
    ],
)
def test_a_batch_insert_returns_the_ids_one_insert_after_the_other_would(tmp_path, create):
    """Several rows inserted at once get the ids one INSERT after the other gives them (on a rowid
    table the largest plus one, so a deleted largest id is given again); other tables keep their own
    rule."""
    sizes = [3, 4, 1, 5]
    together = _ids(tmp_path / "batch.db", create, sizes, one_by_one=False)
    if "random" in create:  # not the rowid: the table's own (random) ids, not the largest plus one
        assert any(b != a + 1 for a, b in zip(together, together[1:]))
        return
    assert together == _ids(tmp_path / "rows.db", create, sizes, one_by_one=True)
    reused = "AUTOINCREMENT" not in create
    assert together[:4] == ([1, 2, 3, 3] if reused else [1, 2, 3, 4])
