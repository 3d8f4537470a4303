from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import table_snapshot
from harness_memory import ImportFormatError, MemoryStore


def _fill(s):
    s.remember("alpha fact", type="success", agent_id="a", tags=["x", "y"], importance=0.9, metadata={"n": 1})
    s.remember("beta decision\nwith two lines", type="decision", agent_id="a", scope="global", key="k1")
    s.remember("gamma by b", type="failure", agent_id="b", error="ValueError: bad value 42", task_signature="t:sig")
    m = s.remember("delta in ns2", type="pattern", agent_id="a", namespace="ns2")
    s.apply(m.id, helpful=True)


FIELDS = (
    "uid",
    "namespace",
    "agent_id",
    "scope",
    "type",
    "content",
    "key",
    "task_signature",
    "error_signature",
    "tags",
    "importance",
    "times_applied",
    "times_successful",
    "success_rate",
    "metadata",
    "created_at",
)


def _snapshot(s):
    rows = s._core.backend.execute("SELECT id FROM memories ORDER BY uid").fetchall()
    return [{f: getattr(s.get(r[0]), f) for f in FIELDS} for r in rows]


def test_jsonl_round_trip_and_idempotent_reimport(tmp_path, store):
    _fill(store)
    path = tmp_path / "export.jsonl"
    assert store.export_jsonl(path) == 4
    header = json.loads(path.read_text().splitlines()[0])
    assert (
        header["format"] == "harness-memory" and header["version"] == 5
    )  # with its access log and the miner's templates
    with MemoryStore(tmp_path / "copy.db") as other:
        r1 = other.import_jsonl(path)
        assert (r1.inserted, r1.updated, r1.unchanged) == (4, 0, 0)
        assert _snapshot(other) == _snapshot(store)
        counts = table_snapshot(other)
        r2 = other.import_jsonl(path)
        assert (r2.inserted, r2.updated, r2.unchanged) == (0, 0, 4)
        assert table_snapshot(other) == counts
        assert other.recall("alpha", agent_id="a")[0].memory.content == "alpha fact"


def test_jsonl_bad_file_imports_nothing(tmp_path, store):
    _fill(store)
    path = tmp_path / "e.jsonl"
    store.export_jsonl(path)
    lines = path.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["importance"] = 7
    path.write_text("\n".join(lines[:2] + [json.dumps(bad)] + lines[3:]) + "\n")
    with MemoryStore(tmp_path / "copy.db") as other:
        before = table_snapshot(other)
        with pytest.raises(ImportFormatError, match="importance"):
            other.import_jsonl(path)
        assert table_snapshot(other) == before
    for content in (
        "",
        "not json\n",
        '{"format": "other"}\n',
        '{"format": "harness-memory", "version": 99}\n',
        '{"format": "harness-memory", "version": 1}\n[1,2]\n',
    ):
        path.write_text(content)
        with pytest.raises(ImportFormatError):
            store.import_jsonl(path)


record_st = st.fixed_dictionaries(
    {
        "content": st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=80).filter(str.strip),
        "type": st.sampled_from(["success", "failure", "decision", "pattern", "preference"]),
        "agent_id": st.sampled_from(["a", "b", "agent-ü"]),
        "scope": st.sampled_from(["agent", "global"]),
        "tags": st.lists(st.sampled_from(["x", "y", "z w"]), max_size=3),
        "importance": st.floats(0, 1),
        "metadata": st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=2),
    }
)


@hsettings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(record_st, min_size=1, max_size=12))
def test_jsonl_round_trip_property(tmp_path_factory, records):
    d = tmp_path_factory.mktemp("rt")
    with MemoryStore(d / "a.db") as a, MemoryStore(d / "b.db") as b:
        a.remember_many(records)
        a.export_jsonl(d / "x.jsonl")
        b.import_jsonl(d / "x.jsonl")
        b.import_jsonl(d / "x.jsonl")
        assert _snapshot(a) == _snapshot(b)


def test_markdown_export_edit_import(tmp_path, store):
    a = store.remember("keep this one", type="success", agent_id="a")
    b = store.remember("edit this one", type="decision", agent_id="a")
    c = store.remember("delete this one", type="failure", agent_id="a")
    store.remember("other agent", type="success", agent_id="b")
    md = tmp_path / "agents" / "a" / "MEMORY.md"
    assert store.export_markdown("a", md) == 3
    text = md.read_text()
    assert f"(success): keep this one  <!-- hm:{a.uid} -->" in text
    r = store.import_markdown("a", md)
    assert r.skipped_file  # unchanged since export
    lines = [ln for ln in text.splitlines() if "delete this one" not in ln]
    lines = [ln.replace("edit this one", "edited by a human") for ln in lines]
    lines.append("- [2026-02-03] (preference): prefer small commits\n  over big ones")
    md.write_text("\n".join(lines) + "\n")
    r = store.import_markdown("a", md)
    assert (r.inserted, r.updated, r.deleted, r.unchanged) == (1, 1, 1, 1)
    assert store.get(b.id).content == "edited by a human" and store.get(b.id).version == 2
    with pytest.raises(LookupError):
        store.get(c.id)
    new = store.get_by_type("preference", agent_id="a")[0]
    assert new.content == "prefer small commits\nover big ones"
    assert new.created_at.strftime("%Y-%m-%d") == "2026-02-03"
    assert store.import_markdown("a", md).skipped_file
    # export again: the new memory now carries its marker, and re-importing changes nothing
    store.export_markdown("a", md)
    md.write_text(md.read_text() + "\n")
    r = store.import_markdown("a", md)
    assert (r.inserted, r.updated, r.deleted) == (0, 0, 0)
    assert store.stats()["memories"] == 4


def test_markdown_bad_file_changes_nothing(tmp_path, store):
    store.remember("keep", type="success", agent_id="a")
    md = tmp_path / "MEMORY.md"
    store.export_markdown("a", md)
    before = table_snapshot(store)
    md.write_text(md.read_text() + "- [2026-01-01] (bogus_type): x\n")
    with pytest.raises(ImportFormatError):
        store.import_markdown("a", md)
    md.write_text("- not a valid bullet\n")
    with pytest.raises(ImportFormatError):
        store.import_markdown("a", md)
    assert table_snapshot(store) == before
