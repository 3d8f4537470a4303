"""New database files as copies of the migrated empty schema (harness_memory/sqlite_fresh.py)."""

from __future__ import annotations

from harness_memory import MemoryStore
from harness_memory.migrate import applied_migrations, migrate
from harness_memory.sqlite_backend import SQLiteBackend, connect
from harness_memory.sqlite_fresh import create


def _schema(path) -> tuple[set, list]:
    c = connect(path)
    try:
        objects = set(c.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
        names = [r[0] for r in c.execute("SELECT name FROM schema_migrations ORDER BY version")]
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        c.close()
    return objects, names


def _stepwise(path) -> None:
    """The usual path, whatever this process created before: the file exists (connect made it
    empty), so it is migrated step by step."""
    connect(path).close()
    assert path.exists()
    b = SQLiteBackend(path)
    try:
        assert len(migrate(b)) == len(SQLiteBackend.migration_steps())
    finally:
        b.close()


def test_a_copied_database_is_the_migrated_schema(tmp_path):
    with MemoryStore(tmp_path / "first.db"):
        pass  # this process has created a new database before
    assert create(tmp_path / "copy.db") is True
    _stepwise(tmp_path / "stepwise.db")
    copy, stepwise = _schema(tmp_path / "copy.db"), _schema(tmp_path / "stepwise.db")
    assert copy == stepwise
    b = SQLiteBackend(tmp_path / "copy.db")
    try:
        assert migrate(b) == [] and applied_migrations(b) == copy[1]  # nothing left to run
    finally:
        b.close()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []
    with MemoryStore(tmp_path / "copy.db") as s:  # and it works as a store
        m = s.remember("the cache key includes the lock file", type="success", agent_id="a")
        assert s.recall("cache key lock file", agent_id="a")[0].memory.id == m.id


def test_a_file_another_process_created_meanwhile_is_left_as_it_is(tmp_path):
    with MemoryStore(tmp_path / "first.db"):
        pass
    target = tmp_path / "taken.db"
    target.write_bytes(b"someone else's bytes")
    assert create(target) is False
    assert target.read_bytes() == b"someone else's bytes"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_where_no_copy_can_be_made_the_caller_creates_the_file(tmp_path):
    with MemoryStore(tmp_path / "first.db"):
        pass
    assert create(tmp_path / "no-such-folder" / "m.db") is False
    assert not (tmp_path / "no-such-folder").exists()
    many = [tmp_path / f"s{i}.db" for i in range(5)]
    for p in many:  # the store path itself: every new file opens as a store with its schema
        with MemoryStore(p) as s:
            s.remember(f"note in {p.name}", type="success", agent_id="a")
    assert {_schema(p)[1][-1] for p in many} == {_schema(tmp_path / "first.db")[1][-1]}


def test_an_in_memory_store_never_becomes_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with MemoryStore(tmp_path / "first.db"):
        pass
    for _ in range(3):
        with MemoryStore(":memory:") as s:
            s.remember("kept in memory only", type="success", agent_id="a")
            assert s.recall("kept in memory", agent_id="a")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.db"]


_ONE_PROCESS = r"""
import sys
from pathlib import Path
from harness_memory import MemoryStore
from harness_memory import sqlite_fresh
d = Path(sys.argv[1])
with MemoryStore(d / "one.db"):
    pass
print("after one:", bool(sqlite_fresh._image))
with MemoryStore(d / "two.db"):
    pass
print("after two:", bool(sqlite_fresh._image))
print("in memory:", sqlite_fresh.create(Path(":memory:")))
"""


def test_a_process_that_creates_one_store_builds_no_copy(tmp_path):
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _ONE_PROCESS, str(tmp_path)], capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    assert out == ["after one: False", "after two: True", "in memory: False"]
    assert _schema(tmp_path / "one.db") == _schema(tmp_path / "two.db")


def test_a_path_under_a_file_is_left_to_the_usual_error(tmp_path):
    from harness_memory.errors import HarnessMemoryError

    with MemoryStore(tmp_path / "first.db"):
        pass
    (tmp_path / "plain").write_text("not a folder")
    assert create(tmp_path / "plain" / "m.db") is False
    try:
        MemoryStore(tmp_path / "plain" / "m.db")
    except HarnessMemoryError as exc:
        assert "plain" in str(exc)
    else:
        raise AssertionError("a store under a file opened")
