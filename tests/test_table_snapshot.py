"""The table snapshot behind every "a refused call changes nothing" property (conftest.table_snapshot):
built from the schema, so it sees every table, a table added later, and a row changed in place."""

from __future__ import annotations

from conftest import table_counts, table_names, table_snapshot


def test_the_snapshot_covers_every_table_of_the_schema(store, backend_name):
    store.remember("pip install fails behind the proxy", type="failure", agent_id="a", tags=["pip"])
    snap = table_snapshot(store)
    names = set(table_names(store))
    if backend_name == "sqlite":
        # an FTS5 or vec0 table's shadow tables are its storage: the virtual table stands for them
        virtual = {"memories_fts", "fix_errors_fts", "fix_blocks_fts", "memory_vectors"}
        names = {n for n in names if not any(n.startswith(v + "_") for v in virtual)} | virtual
        names -= {"memories_fts_vocab", "fix_errors_vocab", "fix_blocks_vocab"}  # derived from their FTS tables
        names.add("sqlite_sequence")  # AUTOINCREMENT's counters: a rolled-back insert leaves them alone
    assert set(snap) == names
    for table in (
        "memories",
        "memory_tags",
        "memories_fts",
        "memory_vectors",
        "task_attempts",
        "tool_calls",
        "documents",
        "memory_sources",
        "job_runs",
        "fix_links",
    ):
        assert table in snap
    assert snap["memories"][0] == snap["memories_fts"][0] == snap["memory_vectors"][0] == 1
    assert table_counts(store) == {name: count for name, (count, _) in snap.items()}


def test_a_table_added_later_is_in_the_snapshot(store):
    b = store._core.backend
    with b.write() as c:
        c.execute("CREATE TABLE added_by_a_later_step (id INTEGER PRIMARY KEY, note TEXT)")
    before = table_snapshot(store)
    assert before["added_by_a_later_step"][0] == 0
    with b.write() as c:
        c.execute("INSERT INTO added_by_a_later_step (id, note) VALUES (1, 'x')")
    assert table_snapshot(store) != before


def test_a_row_changed_in_place_changes_the_snapshot(store):
    m = store.remember("the build cache lives in /var/cache/build", type="context", agent_id="a")
    before = table_snapshot(store)
    with store._core.backend.write() as c:
        c.execute("UPDATE memories SET importance = 0.9 WHERE id = ?", (m.id,))
    after = table_snapshot(store)
    assert after["memories"][0] == before["memories"][0]  # the same count ...
    assert after["memories"] != before["memories"]  # ... but not the same rows
    assert {k: v for k, v in after.items() if k != "memories"} == {k: v for k, v in before.items() if k != "memories"}


def test_a_changed_index_row_changes_the_snapshot(store):
    m = store.remember("connection refused on port 5432", type="failure", agent_id="a", tags=["db"])
    before = table_snapshot(store)
    with store._core.backend.write() as c:
        c.execute("UPDATE memory_tags SET tag = 'other' WHERE memory_id = ?", (m.id,))
    assert table_snapshot(store)["memory_tags"] != before["memory_tags"]
