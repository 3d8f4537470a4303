"""Inputs refused at the edge with the library's own errors: opening bad files, run_job
arguments, metadata nesting, strict JSONL imports (numbers, timestamps, nesting; the line is
named and nothing is imported), MEMORY.md years and round trips, the CLI's one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from pydantic import BaseModel

from conftest import table_snapshot
from harness_memory import (
    HarnessMemoryError,
    ImportFormatError,
    InvalidInputError,
    MemoryStore,
    Settings,
    validation as v,
)
from harness_memory.errors import (
    DatabaseLockedError,
    DatabaseOpenError,
    DatabaseReadOnlyError,
    FileAccessError,
    StorageError,
)
from harness_memory.sqlite_backend import connect


# -- opening ------------------------------------------------------------------------------------------
def test_a_file_that_is_not_a_database(tmp_path):
    bad = tmp_path / "notes.db"
    bad.write_bytes(b"this is a text file, not SQLite\n" * 200)
    with pytest.raises(DatabaseOpenError, match="not a database"):
        MemoryStore(bad)
    assert bad.read_bytes().startswith(b"this is a text file")  # left as it was


def test_a_directory(tmp_path):
    with pytest.raises(DatabaseOpenError, match="directory"):
        MemoryStore(tmp_path)


def test_a_path_inside_a_file(tmp_path):
    f = tmp_path / "plain"
    f.write_text("x")
    with pytest.raises(DatabaseOpenError):
        MemoryStore(f / "memory.db")


@pytest.mark.parametrize("path", [123, b"/tmp/x.db", "", "bad\x00name.db", ["a"]])
def test_paths_that_are_not_paths(path):
    with pytest.raises(InvalidInputError):
        MemoryStore(path)


def test_other_constructor_arguments(tmp_path):
    with pytest.raises(InvalidInputError):
        MemoryStore(tmp_path / "a.db", settings={"namespace": "x"})
    with pytest.raises(InvalidInputError):
        MemoryStore(tmp_path / "a.db", clock=42)
    with pytest.raises(InvalidInputError):
        MemoryStore(tmp_path / "a.db", allow_embedder_change="yes")


def test_invalid_settings_from_the_environment_are_a_configuration_error(tmp_path, monkeypatch):
    from harness_memory import ConfigurationError

    monkeypatch.setenv("HARNESS_MEMORY_MAX_LIMIT", "-5")
    with pytest.raises(ConfigurationError, match="max_limit"):
        MemoryStore(tmp_path / "a.db")


def test_a_locked_database(tmp_path):
    """Opening an up-to-date store is a read (issue 17): it opens behind a writer; the first write
    waits busy_timeout_ms and then raises DatabaseLockedError."""
    path = tmp_path / "locked.db"
    MemoryStore(path).close()
    holder = connect(path)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with MemoryStore(path, settings=Settings(busy_timeout_ms=200)) as s:
            assert s.stats()["memories"] == 0
            with pytest.raises(DatabaseLockedError, match="locked"):
                s.remember("x", type="success", agent_id="a")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    MemoryStore(path).close()  # free again


def test_a_new_database_behind_a_lock_is_a_locked_error(tmp_path):
    path = tmp_path / "new.db"
    holder = connect(path)  # creates the file and takes the write lock before any schema exists
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(DatabaseLockedError, match="locked"):
            MemoryStore(path, settings=Settings(busy_timeout_ms=200))
    finally:
        holder.execute("ROLLBACK")
        holder.close()


WITHOUT_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]
OPEN_SCRIPT = textwrap.dedent("""
    import sys
    from harness_memory import MemoryStore
    try:
        MemoryStore(sys.argv[1])
    except Exception as exc:
        print(type(exc).__name__, exc.__class__.__mro__[1].__name__, str(exc))
    else:
        print("opened")
""")


def _open_without_privileges(path) -> str:
    """Open ``path`` in a process that obeys file permissions (root's DAC override dropped)."""
    cmd = [sys.executable, "-c", OPEN_SCRIPT, str(path)]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: file permissions cannot be enforced here")
        cmd = WITHOUT_DAC + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()


def test_a_read_only_database(tmp_path):
    path = tmp_path / "ro" / "memory.db"
    with MemoryStore(path) as s:
        s.remember("kept", type="success", agent_id="a")
    path.chmod(0o444)
    try:
        out = _open_without_privileges(path)
    finally:
        path.chmod(0o644)
    assert out.startswith("DatabaseReadOnlyError StorageError") and "read-only" in out, out


def test_an_unreadable_database(tmp_path):
    path = tmp_path / "nr" / "memory.db"
    MemoryStore(path).close()
    path.chmod(0)
    try:
        out = _open_without_privileges(path)
    finally:
        path.chmod(0o644)
    assert out.startswith("DatabaseOpenError StorageError"), out


def test_storage_errors_are_library_errors():
    for cls in (DatabaseOpenError, DatabaseLockedError, DatabaseReadOnlyError, FileAccessError):
        assert issubclass(cls, StorageError) and issubclass(cls, HarnessMemoryError)
    assert issubclass(FileAccessError, OSError)


# -- run_job ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,kwargs",
    [
        (["decay"], {}),
        (None, {}),
        (3, {}),
        ("defrag", {}),
        ("decay", {"bogus": 1}),
        ("decay", {"dry_run": "yes"}),
        ("decay", {"progress": 5}),
        ("consolidate", {"namespace": ""}),
        ("decay", {"min_interval": float("nan")}),
        ("decay", {"holder": "x\ny"}),
        ("compact", {"force": None}),
        ("compact", {"vacuum": "yes"}),
        ("expire", {"namespace": "n"}),
    ],
)
def test_run_job_arguments(store, name, kwargs):
    with pytest.raises(InvalidInputError):
        store.run_job(name, **kwargs)
    assert store._core.backend.execute("SELECT COUNT(*) FROM job_runs").fetchone()[0] == 0


# -- metadata -----------------------------------------------------------------------------------------
def _nested(depth: int):
    d: dict = {"leaf": 1}
    for _ in range(depth):
        d = {"d": d}
    return d


@pytest.mark.parametrize("depth", [33, 200, 5000])
def test_metadata_nested_too_deep(store, depth):
    before = table_snapshot(store)
    with pytest.raises(InvalidInputError, match="nested"):
        store.remember("deep", type="success", agent_id="a", metadata=_nested(depth))
    assert table_snapshot(store) == before


def test_metadata_at_the_limit_is_fine(store):
    m = store.remember("ok", type="success", agent_id="a", metadata=_nested(v.MAX_NESTING - 1))
    assert m.metadata["d"]["d"]


def test_lists_count_as_nesting_too(store):
    deep: list = [1]
    for _ in range(100):
        deep = [deep]
    with pytest.raises(InvalidInputError):
        store.remember("deep list", type="success", agent_id="a", metadata={"x": deep})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 10**400 * 1.0 if False else float("-inf")])
def test_non_finite_metadata(store, value):
    with pytest.raises(InvalidInputError):
        store.remember("nan", type="success", agent_id="a", metadata={"x": value})


# -- pydantic models ------------------------------------------------------------------------------------
class _Task(BaseModel):
    title: str
    effort: int = 1


def test_model_helper_wraps_validation_errors_without_the_values():
    assert v.model(_Task, {"title": "t"}, "task").title == "t"
    t = _Task(title="x")
    assert v.model(_Task, t, "task") is t
    with pytest.raises(InvalidInputError, match="invalid task: title") as info:
        v.model(_Task, {"effort": "hunter2-secret"}, "task")
    assert "hunter2" not in str(info.value)
    with pytest.raises(InvalidInputError):
        v.model(_Task, 42, "task")


# -- JSONL import ---------------------------------------------------------------------------------------
def _export(store, tmp_path):
    store.remember("first memory", type="success", agent_id="a")
    store.remember("second memory", type="decision", agent_id="a", tags=["x"])
    path = tmp_path / "e.jsonl"
    store.export_jsonl(path)
    return path.read_text().splitlines()


BAD_VALUES = [
    ("created_at", 1e300),
    ("expires_at", 253402300800),
    ("updated_at", -1e20),
    ("last_accessed", "yesterday"),
    ("created_at", None),
    ("access_count", 2**64),
    ("access_count", -1),
    ("access_count", 1.5),
    ("times_applied", True),
    ("version", 2**70),
    ("relevance_score", 2.0),
    ("success_rate", -0.1),
    ("importance", float("nan")),
    ("archived", "yes"),
    ("pinned", 2),
    ("tags", "not-a-list"),
    ("metadata", _nested(40)),
    ("error_template", 7),
    ("uid", "../../etc"),
    ("content", ""),
    ("type", "nonsense"),
    ("scope", "everyone"),
    ("agent_id", ""),
    ("bogus_field", 1),
]


@pytest.mark.parametrize("field,value", BAD_VALUES, ids=[f"{f}-{i}" for i, (f, _) in enumerate(BAD_VALUES)])
def test_a_bad_record_names_its_line_and_imports_nothing(store, tmp_path, field, value):
    lines = _export(store, tmp_path)
    rec = json.loads(lines[2])
    rec[field] = value
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([lines[0], lines[1], json.dumps(rec)]) + "\n")
    with MemoryStore(tmp_path / "target.db") as other:
        before = table_snapshot(other)
        with pytest.raises(ImportFormatError, match=r"bad\.jsonl:3: "):
            other.import_jsonl(path)
        assert table_snapshot(other) == before


def test_the_adversarial_run_records_would_have_broken_the_store(store, tmp_path):
    """created_at 1e300, expires_at in year 10000, access_count 2**64: refused, and the store
    keeps working (get, recall, forget, export)."""
    lines = _export(store, tmp_path)
    for field, value in (("created_at", 1e300), ("expires_at", 253402300800), ("access_count", 2**64)):
        rec = json.loads(lines[1])
        rec[field] = value
        rec["uid"] = "fresh"
        path = tmp_path / f"{field}.jsonl"
        path.write_text(lines[0] + "\n" + json.dumps(rec) + "\n")
        with pytest.raises(ImportFormatError, match=f"{field}.jsonl:2: {field}"):
            store.import_jsonl(path)
    assert len(store.recall("memory", agent_id="a")) == 2
    assert store.export_jsonl(tmp_path / "again.jsonl") == 2


def test_the_extreme_valid_years_import_and_read_back(store, tmp_path):
    lines = _export(store, tmp_path)
    rec = json.loads(lines[1])
    rec.update(uid="old", created_at=v.MIN_TIMESTAMP, updated_at=v.MAX_TIMESTAMP, expires_at=v.MAX_TIMESTAMP)
    path = tmp_path / "edge.jsonl"
    path.write_text(lines[0] + "\n" + json.dumps(rec) + "\n")
    with MemoryStore(tmp_path / "edge.db") as other:
        assert other.import_jsonl(path).inserted == 1
        m = other.get(other.recall("first", agent_id="a")[0].memory.id)
        assert m.created_at.year == 1 and m.expires_at.year == 9999
        assert other.export_jsonl(tmp_path / "edge-out.jsonl") == 1


@pytest.mark.parametrize(
    "line",
    [
        "[" * 3000 + "]" * 3000,
        '{"a": ' * 3000 + "1" + "}" * 3000,
        '{"uid": "' + "\\" * 7 + '"}',
        "1" * 5000,
        "\x00garbage",
        '"just a string"',
    ],
)
def test_hostile_jsonl_lines(store, tmp_path, line):
    lines = _export(store, tmp_path)
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join([lines[0], lines[1], line]) + "\n")
    with MemoryStore(tmp_path / "t.db") as other:
        before = table_snapshot(other)
        with pytest.raises(ImportFormatError, match=r"hostile\.jsonl:3"):
            other.import_jsonl(path)
        assert table_snapshot(other) == before


@pytest.mark.parametrize("header", ["[" * 3000, "", "not json", '{"format": "harness-memory", "version": true}'])
def test_hostile_headers(store, tmp_path, header):
    path = tmp_path / "h.jsonl"
    path.write_text(header + "\n")
    with pytest.raises(ImportFormatError, match=r"h\.jsonl:1"):
        store.import_jsonl(path)


def test_duplicate_uids_in_one_file(store, tmp_path):
    lines = _export(store, tmp_path)
    path = tmp_path / "dup.jsonl"
    path.write_text("\n".join([lines[0], lines[1], lines[1]]) + "\n")
    with MemoryStore(tmp_path / "t.db") as other, pytest.raises(ImportFormatError, match="dup.jsonl:3: uid"):
        other.import_jsonl(path)


def test_export_to_a_missing_folder_is_a_file_access_error(store, tmp_path):
    with pytest.raises(FileAccessError, match="No such file"):
        store.export_jsonl(tmp_path / "missing" / "x.jsonl")
    with pytest.raises(InvalidInputError):
        store.export_jsonl(123)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(FileAccessError):
        store.export_markdown("a", blocker / "MEMORY.md")


# -- MEMORY.md ------------------------------------------------------------------------------------------
def _set_created(store, mid, when: datetime):
    store._core.backend.execute("UPDATE memories SET created_at = ? WHERE id = ?", (when.timestamp(), mid))


def test_years_before_1000_keep_four_digits_both_ways(store, tmp_path):
    m = store.remember("an ancient lesson", type="decision", agent_id="a")
    _set_created(store, m.id, datetime(999, 12, 31, 12, tzinfo=UTC))
    md = tmp_path / "MEMORY.md"
    store.export_markdown("a", md)
    assert "- [0999-12-31] (decision): an ancient lesson" in md.read_text()
    with MemoryStore(tmp_path / "copy.db") as other:
        assert other.import_markdown("a", md).inserted == 1
        assert other.get_by_type("decision", agent_id="a")[0].created_at.date().isoformat() == "0999-12-31"


@pytest.mark.parametrize(
    "bad,lineno",
    [
        ("- [2026-13-01] (success): month 13", 7),
        ("- [26-01-01] (success): short year", 7),
        ("- no date at all", 7),
        ("- [2026-02-30] (success): no such day", 7),
        ("- [2026-01-01] (nonsense): unknown type", 7),
        ("- [2026-01-01] (success):   ", 7),
    ],
)
def test_a_bad_bullet_names_its_line_and_imports_nothing(store, tmp_path, bad, lineno):
    store.remember("first", type="success", agent_id="a")
    md = tmp_path / "MEMORY.md"
    store.export_markdown("a", md)
    text = md.read_text().splitlines()
    assert len(text) == 6
    md.write_text("\n".join(text + [bad, "- [2026-01-02] (success): a good new bullet"]) + "\n")
    before = table_snapshot(store)
    with pytest.raises(ImportFormatError, match=rf"MEMORY\.md:{lineno}: "):
        store.import_markdown("a", md)
    assert table_snapshot(store) == before


contents = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=60)
dates = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(lambda d: d.replace(tzinfo=UTC))
types = st.sampled_from(["success", "failure", "decision", "pattern", "preference"])


@hsettings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(contents, types, dates), min_size=1, max_size=6))
def test_a_memory_md_round_trip_is_the_identity(tmp_path_factory, items):
    d = tmp_path_factory.mktemp("md")
    with MemoryStore(d / "a.db", settings=Settings(redact_secrets=False)) as a:
        made = 0
        for content, mtype, when in items:
            if not content.strip():
                continue
            m = a.remember(content, type=mtype, agent_id="agent", importance=0.5)
            _set_created(a, m.id, when)
            made += 1
        first = d / "first.md"
        n = a.export_markdown("agent", first)
        assert a.import_markdown("agent", first).skipped_file  # unchanged since the export
        edited = d / "same.md"
        edited.write_bytes(first.read_bytes())
        a._core.backend.execute("DELETE FROM markdown_sync")  # forget the hash: parse it for real
        rep = a.import_markdown("agent", edited)
        assert (rep.inserted, rep.updated, rep.deleted, rep.unchanged) == (0, 0, 0, n)
        with MemoryStore(d / "b.db", settings=Settings(redact_secrets=False)) as b:
            assert b.import_markdown("agent", first).inserted == n
            second = d / "second.md"
            b.export_markdown("agent", second)
            assert second.read_bytes() == first.read_bytes()
            got = sorted(
                (m.content, m.type)
                for t in ("success", "failure", "decision", "pattern", "preference")
                for m in b.get_by_type(t, agent_id="agent", limit=100)
            )
            want = sorted(
                (m.content, m.type)
                for t in ("success", "failure", "decision", "pattern", "preference")
                for m in a.get_by_type(t, agent_id="agent", limit=100)
            )
            assert got == want


# -- the command line ------------------------------------------------------------------------------------
def cli(*args, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "harness_memory", *args], capture_output=True, text=True, env=env, timeout=120
    )


def _one_clear_line(p, kind: str):
    assert p.returncode != 0
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and kind in lines[0], p.stderr


def test_cli_non_database_db(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_text("hello " * 1000)
    for args in (["stats"], ["recall", "x"], ["jobs", "status"], ["export", str(tmp_path / "o.jsonl")]):
        _one_clear_line(cli(*args, "--db", str(bad)), "DatabaseOpenError")
    _one_clear_line(cli("stats", "--db", str(tmp_path)), "DatabaseOpenError")


def test_cli_missing_export_folder(tmp_path):
    db = tmp_path / "m.db"
    assert cli("init", "--db", str(db)).returncode == 0  # read-only commands refuse a missing database
    p = cli("export", str(tmp_path / "no" / "such" / "x.jsonl"), "--db", str(db))
    _one_clear_line(p, "FileAccessError")
    assert str(tmp_path / "no") in p.stderr


def test_cli_bad_import_names_the_line(tmp_path):
    db = tmp_path / "m.db"
    cli("remember", "alpha", "--type", "success", "--agent", "a", "--db", str(db))
    out = tmp_path / "x.jsonl"
    cli("export", str(out), "--db", str(db))
    lines = out.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["created_at"] = 1e300
    out.write_text(lines[0] + "\n" + json.dumps(rec) + "\n")
    assert cli("init", "--db", str(tmp_path / "n.db")).returncode == 0
    p = cli("import", str(out), "--db", str(tmp_path / "n.db"))
    _one_clear_line(p, "ImportFormatError")
    assert "x.jsonl:2" in p.stderr
    _one_clear_line(cli("import", str(tmp_path / "missing.jsonl"), "--db", str(db)), "ImportFormatError")


def test_cli_bad_settings_and_jobs(tmp_path):
    db = tmp_path / "m.db"
    assert cli("init", "--db", str(db)).returncode == 0
    _one_clear_line(cli("stats", "--db", str(db), env_extra={"HARNESS_MEMORY_MAX_TAGS": "zero"}), "ConfigurationError")
    _one_clear_line(cli("jobs", "run", "defrag", "--db", str(db)), "InvalidInputError")


def test_cli_debug_shows_the_traceback(tmp_path):
    p = cli("--debug", "stats", "--db", str(tmp_path))
    assert p.returncode != 0 and "Traceback" in p.stderr and "DatabaseOpenError" in p.stderr


# -- secrets on the paths of this part -------------------------------------------------------------------
def test_an_imported_error_template_is_redacted(store, tmp_path):
    lines = _export(store, tmp_path)
    rec = json.loads(lines[1])
    rec.update(uid="tpl", error_template="connect failed: postgres://app:Sup3rS3cret@db/x <*>")
    path = tmp_path / "tpl.jsonl"
    path.write_text(lines[0] + "\n" + json.dumps(rec) + "\n")
    with MemoryStore(tmp_path / "t.db") as other:
        other.import_jsonl(path)
        row = other._core.backend.execute("SELECT error_template FROM memories WHERE uid = 'tpl'").fetchone()
        assert "Sup3rS3cret" not in row[0] and "[REDACTED:url_password]" in row[0]


def test_a_failed_job_run_records_a_redacted_error(tmp_path, monkeypatch):
    from harness_memory import jobs

    def boom(store, **_):
        raise RuntimeError("cannot reach redis://:Hunter22Secret@cache:6379")

    monkeypatch.setitem(jobs.JOBS, "expire", boom)
    with MemoryStore(tmp_path / "j.db") as s:
        with pytest.raises(RuntimeError):
            s.run_job("expire")
        err = s._core.backend.execute("SELECT error FROM job_runs").fetchone()[0]
        assert "Hunter22Secret" not in err and "[REDACTED:url_password]" in err
