"""JSONL import as harness_memory/portability.py documents it: every record checked before the one
write (a bad file writes nothing and the error names the line and the field), the header's format and
version range at its edges, JSON too deep or unreadable, duplicate uids, and the fields read back."""

from __future__ import annotations

import json

import pytest

from conftest import table_snapshot
from harness_memory import ImportFormatError, MemoryStore
from harness_memory.portability import VERSION

HEADER = {"format": "harness-memory", "version": 1}
GOOD = {
    "uid": "m1",
    "namespace": "default",
    "agent_id": "a",
    "scope": "agent",
    "type": "success",
    "content": "pin the proxy",
    "created_at": 1_767_225_600.0,
    "updated_at": 1_767_225_660.0,
}


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "p.db") as s:
        yield s


def _file(tmp_path, *records, header=HEADER, name="in.jsonl"):
    path = tmp_path / name
    lines = [header if isinstance(header, str) else json.dumps(header)]
    lines += [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_full_record_is_read_back_field_by_field(store, tmp_path):
    rec = {
        **GOOD,
        "key": "proxy",
        "tags": ["net"],
        "importance": 0.8,
        "relevance_score": 0.4,
        "success_rate": 0.5,
        "access_count": 3,
        "times_applied": 2,
        "times_successful": 1,
        "version": 2,
        "archived": 1,
        "pinned": False,
        "last_accessed": 1_767_225_700.0,
        "expires_at": 1_767_999_999.0,
        "metadata": {"k": 1},
        "session_id": "S",
        "task_id": "T",
    }
    report = store.import_jsonl(_file(tmp_path, rec))
    assert report.inserted == 1
    mid = store._core.backend.execute("SELECT id FROM memories WHERE uid = 'm1'").fetchone()[0]
    m = store.get(mid)
    assert (m.uid, m.key, m.tags, m.importance, m.relevance_score, m.success_rate) == (
        "m1",
        "proxy",
        ["net"],
        0.8,
        0.4,
        0.5,
    )
    assert (m.access_count, m.times_applied, m.times_successful, m.version) == (3, 2, 1, 2)
    assert (m.archived, m.pinned, m.session_id, m.task_id, m.metadata) == (True, False, "S", "T", {"k": 1})
    assert m.created_at.timestamp() == GOOD["created_at"] and m.updated_at.timestamp() == GOOD["updated_at"]
    assert m.last_accessed.timestamp() == 1_767_225_700.0 and m.expires_at.timestamp() == 1_767_999_999.0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"uid": "has space"}, "uid"),
        ({"uid": "u" * 65}, "uid"),
        ({"relevance_score": 1.5}, "relevance_score"),
        ({"success_rate": -0.1}, "success_rate"),
        ({"error_signature": "e" * 4097}, "error_signature"),
        ({"error_template": 3}, "error_template"),
        ({"access_count": -1}, "access_count"),
        ({"times_applied": 1, "times_successful": 2}, "times_successful exceeds times_applied"),
        ({"version": "two"}, "version"),
        ({"created_at": None}, "created_at"),
        ({"updated_at": "later"}, "updated_at"),
        ({"expires_at": "never"}, "expires_at"),
        ({"archived": 1.0}, "archived"),
        ({"pinned": "yes"}, "pinned"),
        ({"thread_id": ""}, "thread_id"),
        ({"reflected_at": "x"}, "reflected_at"),
        ({"sources": ["ok", "not ok"]}, "sources"),
        ({"sources": "m2"}, "sources"),
        ({"type": "nope"}, "type"),
        ({"surprise": 1}, "unknown fields"),
    ],
)
def test_a_bad_memory_record_names_its_line_and_field_and_writes_nothing(store, tmp_path, change, field):
    other = {**GOOD, "uid": "m0", "content": "a good record before the bad one"}
    path = _file(tmp_path, other, {**GOOD, **change})
    before = table_snapshot(store)
    with pytest.raises(ImportFormatError, match=rf"in\.jsonl:3: .*\b{field}\b"):
        store.import_jsonl(path)
    assert table_snapshot(store) == before


@pytest.mark.parametrize("missing", ["uid", "namespace", "agent_id", "scope", "type", "content", "created_at"])
def test_a_record_missing_a_required_field_is_refused(store, tmp_path, missing):
    rec = {k: x for k, x in GOOD.items() if k != missing}
    with pytest.raises(ImportFormatError, match=rf"in\.jsonl:2: missing fields \['{missing}'\]"):
        store.import_jsonl(_file(tmp_path, rec))


def test_as_many_successes_as_applications_is_accepted(store, tmp_path):
    assert store.import_jsonl(_file(tmp_path, {**GOOD, "times_applied": 2, "times_successful": 2})).inserted == 1


@pytest.mark.parametrize("version", [1, VERSION])
def test_header_versions_from_one_to_the_current_one_are_read(store, tmp_path, version):
    assert store.import_jsonl(_file(tmp_path, GOOD, header={**HEADER, "version": version})).inserted == 1


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ({**HEADER, "version": 0}, "format version 0"),
        ({**HEADER, "version": VERSION + 1}, f"format version {VERSION + 1}"),
        ({**HEADER, "version": True}, "format version True"),
        ({**HEADER, "version": "1"}, "format version '1'"),
        ({"format": "other", "version": 1}, "not a harness-memory export"),
        ("[1, 2]", "not a harness-memory export"),
        ("", "empty file or no header line"),
        ("{not json", "invalid JSON"),
    ],
)
def test_a_bad_header_is_refused_on_line_one(store, tmp_path, header, message):
    with pytest.raises(ImportFormatError, match=rf"in\.jsonl:1: .*{message}"):
        store.import_jsonl(_file(tmp_path, GOOD, header=header))


def test_a_repeated_uid_names_the_line_it_first_appeared_on(store, tmp_path):
    path = _file(tmp_path, GOOD, {**GOOD, "uid": "m2"}, {**GOOD, "content": "again"})
    with pytest.raises(ImportFormatError, match=r"in\.jsonl:4: uid m1 already appears on line 2"):
        store.import_jsonl(path)


def test_a_line_that_is_not_an_object_is_refused(store, tmp_path):
    with pytest.raises(ImportFormatError, match=r"in\.jsonl:2: a record must be a JSON object"):
        store.import_jsonl(_file(tmp_path, "[1]"))


def test_blank_lines_are_skipped_and_line_numbers_still_count_them(store, tmp_path):
    path = _file(tmp_path, GOOD, "", "   ", {**GOOD, "uid": "m1"})
    with pytest.raises(ImportFormatError, match=r"in\.jsonl:5: uid m1 already appears on line 2"):
        store.import_jsonl(path)


def test_json_nested_past_the_bound_is_refused_before_parsing(store, tmp_path):
    from harness_memory.validation import MAX_NESTING

    deep = "[" * (MAX_NESTING + 2) + "]" * (MAX_NESTING + 2)
    with pytest.raises(ImportFormatError, match=rf"in\.jsonl:2: nested more than {MAX_NESTING} levels deep"):
        store.import_jsonl(_file(tmp_path, '{"metadata": ' + deep + "}"))
    # brackets inside strings do not count
    text = "[" * (MAX_NESTING + 5) + '\\"'
    assert store.import_jsonl(_file(tmp_path, {**GOOD, "content": text}, name="ok.jsonl")).inserted == 1


def test_invalid_json_names_its_column(store, tmp_path):
    with pytest.raises(ImportFormatError, match=r"in\.jsonl:2: invalid JSON \(.* at column 9\)"):
        store.import_jsonl(_file(tmp_path, '{"uid": }'))


def test_a_missing_or_non_utf8_file_is_an_import_error(store, tmp_path):
    with pytest.raises(ImportFormatError, match="no such file"):
        store.import_jsonl(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(json.dumps(HEADER).encode() + b"\n\xff\n")
    with pytest.raises(ImportFormatError, match="not UTF-8"):
        store.import_jsonl(bad)


LINK = {"error_signature": "err_1", "worked": 2, "failed": 1, "first_at": 1_767_225_600.0, "last_at": 1_767_225_700.0}
FIX = {**GOOD, "error_basis": {"message": "ValueError: bad", "category": "value"}, "fix_kind": "fix_0123456789abcdef"}


def test_a_report_without_state_records_says_none_were_imported(store, tmp_path):
    from harness_memory.portable_state import StateReport

    assert store.import_jsonl(_file(tmp_path, GOOD)).state == StateReport()


def test_fix_links_error_basis_and_fix_kind_are_imported_and_reimport_sets_not_adds(store, tmp_path):
    rec = {**FIX, "fix_links": [{**LINK, "error_category": "value", "bound_params": '["a", "b"]'}]}
    path = _file(tmp_path, rec)
    store.import_jsonl(path)
    store.import_jsonl(_file(tmp_path, {**rec, "updated_at": GOOD["updated_at"] + 1}, name="again.jsonl"))
    b = store._core.backend
    row = b.execute("SELECT error_basis, fix_kind FROM memories WHERE uid = 'm1'").fetchone()
    assert json.loads(row[0]) == FIX["error_basis"] and row[1] == "fix_0123456789abcdef"
    links = b.execute(
        "SELECT error_signature, error_category, worked, failed, helpful, unhelpful, first_at, last_at, bound_params "
        "FROM fix_links"
    ).fetchall()
    assert [(*r[:8], json.loads(r[8])) for r in links] == [
        ("err_1", "value", 2, 1, 0, 0, LINK["first_at"], LINK["last_at"], ["a", "b"])
    ]  # one link, its counts as in the file (set, not added to, by the second import)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"error_basis": "text"}, "error_basis"),
        ({"error_basis": {"frame": "f"}}, "error_basis"),
        ({"error_basis": {"message": "m", "other": 1}}, "error_basis"),
        ({"error_basis": {"message": "m", "excerpt": "e" * 8193}}, r"error_basis\.excerpt"),
        ({"fix_kind": "fix_123"}, "fix_kind"),
        ({"fix_kind": "fix_0123456789ABCDEF"}, "fix_kind"),
        ({"fix_links": "err_1"}, "fix_links must be a list"),
        ({"fix_links": [LINK] * 10_001}, "fix_links must be a list"),
        ({"fix_links": [["err_1"]]}, r"fix_links\[0\]"),
        ({"fix_links": [{**LINK, "surprise": 1}]}, r"fix_links\[0\]"),
        ({"fix_links": [{k: x for k, x in LINK.items() if k != "error_signature"}]}, r"fix_links\[0\]"),
        ({"fix_links": [LINK, {**LINK, "error_signature": "e" * 201}]}, r"fix_links\[1\]\.error_signature"),
        ({"fix_links": [{**LINK, "error_category": "c" * 201}]}, "error_category"),
        ({"fix_links": [{**LINK, "error_message": "m" * 8193}]}, "error_message"),
        ({"fix_links": [{**LINK, "worked": -1}]}, r"fix_links\[0\]\.worked"),
        ({"fix_links": [{**LINK, "last_at": None}]}, r"fix_links\[0\] needs first_at and last_at"),
        ({"fix_links": [{**LINK, "bound_params": ["p"] * 9}]}, r"fix_links\[0\]\.bound_params"),
        ({"fix_links": [{**LINK, "bound_params": [""]}]}, r"fix_links\[0\]\.bound_params"),
        ({"fix_links": [{**LINK, "bound_params": ["p" * 201]}]}, r"fix_links\[0\]\.bound_params"),
    ],
)
def test_a_bad_fix_link_field_is_named(store, tmp_path, change, field):
    before = table_snapshot(store)
    with pytest.raises(ImportFormatError, match=rf"in\.jsonl:2: .*{field}"):
        store.import_jsonl(_file(tmp_path, {**FIX, **change}))
    assert table_snapshot(store) == before


def test_fix_links_at_their_bounds_are_accepted(store, tmp_path):
    link = {
        **LINK,
        "error_signature": "e" * 200,
        "error_category": "c" * 200,
        "error_message": "m" * 8192,
        "bound_params": ["p" * 200] * 8,
    }
    rec = {**FIX, "error_basis": {"message": "m", "excerpt": "e" * 8192}, "fix_links": [link]}
    assert store.import_jsonl(_file(tmp_path, rec)).inserted == 1


def test_threads_reflection_times_and_sources_are_imported_even_when_a_source_comes_later(store, tmp_path):
    fact = {**GOOD, "uid": "f1", "type": "fact", "content": "a fact", "sources": ["e1", "e2", "gone"]}
    eps = [
        {
            **GOOD,
            "uid": u,
            "type": "episode",
            "content": f"event {u}",
            "thread_id": "th",
            "reflected_at": 1_767_300_000.0,
        }
        for u in ("e1", "e2")
    ]
    store.import_jsonl(_file(tmp_path, fact, *eps))
    b = store._core.backend
    fid = b.execute("SELECT id FROM memories WHERE uid = 'f1'").fetchone()[0]
    assert [m.uid for m in store.reflection_sources(fid)] == ["e1", "e2"]  # the unknown uid is skipped
    e1 = store.get(b.execute("SELECT id FROM memories WHERE uid = 'e1'").fetchone()[0])
    assert e1.thread_id == "th" and e1.reflected_at.timestamp() == 1_767_300_000.0


def test_a_folder_is_an_import_error_saying_why(store, tmp_path):
    with pytest.raises(ImportFormatError, match=r"cannot read .*: Is a directory$"):
        store.import_jsonl(tmp_path)


def test_a_reimport_counts_what_it_inserted_updated_and_left_alone(store, tmp_path):
    first = store.import_jsonl(_file(tmp_path, GOOD, {**GOOD, "uid": "m2", "content": "second"}))
    assert (first.inserted, first.updated, first.unchanged) == (2, 0, 0)
    changed = {**GOOD, "content": "pin the proxy and the CA", "updated_at": GOOD["updated_at"] + 5}
    again = store.import_jsonl(_file(tmp_path, changed, {**GOOD, "uid": "m2", "content": "second"}, name="b.jsonl"))
    assert (again.inserted, again.updated, again.unchanged) == (0, 1, 1)
    mid = store._core.backend.execute("SELECT id FROM memories WHERE uid = 'm1'").fetchone()[0]
    assert store.get(mid).content == "pin the proxy and the CA"


def _md(tmp_path, text, name="MEMORY.md"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_bullets_inside_an_html_comment_are_not_memories(store, tmp_path):
    text = (
        "# Notes\n\n<!-- drafts\n- [2026-01-02] (success): hidden draft\n-->\n"
        "<!-- one line comment -->\n- [2026-01-03] (success): kept note\n"
    )
    rep = store.import_markdown("a", _md(tmp_path, text))
    assert rep.inserted == 1
    assert [m.content for m in store.get_by_type("success", agent_id="a")] == ["kept note"]


def test_continuation_lines_crlf_and_the_bullet_date_are_read(store, tmp_path):
    text = "- [2025-03-04] (decision): first line\r\n  second line\r\n- [2025-03-05] (success): other\r\n"
    store.import_markdown("a", _md(tmp_path, text))
    got = {m.type: m for m in store.get_by_type("decision", agent_id="a") + store.get_by_type("success", agent_id="a")}
    assert got["decision"].content == "first line\nsecond line"
    assert got["decision"].created_at.date().isoformat() == "2025-03-04"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# t\n- not a bullet of ours\n", r"MEMORY\.md:2: bullets must read"),
        ("- [2025-02-30] (success): no such day\n", r"MEMORY\.md:1: bad date 2025-02-30"),
        ("- [2025-02-03] (nope): unknown type\n", r"MEMORY\.md:1: .*unknown memory type"),
        (
            "- [2025-02-03] (success): a <!-- hm:abc -->\n- [2025-02-03] (success): b <!-- hm:abc -->\n",
            r"MEMORY\.md:2: the marker hm:abc already appears on line 1",
        ),
    ],
)
def test_a_bad_markdown_line_is_named_and_changes_nothing(store, tmp_path, text, message):
    before = table_snapshot(store)
    with pytest.raises(ImportFormatError, match=message):
        store.import_markdown("a", _md(tmp_path, text))
    assert table_snapshot(store) == before


def test_a_failed_markdown_write_is_raised_not_reported(store, tmp_path, monkeypatch):
    from harness_memory import writes

    def explode(*a, **kw):
        raise RuntimeError("disk full")

    monkeypatch.setattr(writes, "_insert", explode)
    with pytest.raises(RuntimeError, match="disk full"):
        store.import_markdown("a", _md(tmp_path, "- [2025-02-03] (success): a note\n"))
    assert store.get_by_type("success", agent_id="a") == []


def test_an_export_carries_threads_sources_and_fix_links_to_another_store(store, tmp_path):
    err = "ValueError: invalid literal for int() with base 10: 'x'"
    ep = store.remember("Caroline joined the support group", type="episode", agent_id="a", thread_id="th")
    store.remember("Caroline went to the group again", type="episode", agent_id="a", thread_id="th")
    fact = store.reflect(thread_id="th")[0]
    fix = store.learn_fix(err, "cast with int(x.strip())", agent_id="a")
    path = tmp_path / "out.jsonl"
    store.export_jsonl(path)
    recs = {r["uid"]: r for r in map(json.loads, path.read_text().splitlines()[1:]) if "uid" in r and "content" in r}
    assert recs[ep.uid]["thread_id"] == "th" and "reflected_at" in recs[ep.uid]
    assert ep.uid in recs[fact.uid]["sources"] and "thread_id" not in recs[fact.uid]
    assert recs[fix.uid]["fix_links"][0]["worked"] == 1 and recs[fix.uid]["fix_kind"].startswith("fix_")
    with MemoryStore(tmp_path / "copy.db") as copy:
        copy.import_jsonl(path)
        b = copy._core.backend
        got = {uid: copy.get(mid) for mid, uid in b.execute("SELECT id, uid FROM memories").fetchall()}
        assert got[ep.uid].thread_id == "th" and got[ep.uid].reflected_at is not None
        assert ep.uid in [m.uid for m in copy.reflection_sources(got[fact.uid].id)]
        assert [e.memory.uid for e in copy.fixes_for(err, agent_id="a")] == [fix.uid]


def test_an_export_is_utf8_text_with_every_character_as_written(store, tmp_path):
    # a reader of the file (a human, grep, a diff) sees the text, not JSON escapes of it
    m = store.remember(
        "le cache échoue: redémarrer 服务器 ✓", type="failure", agent_id="a", tags=["réseau"], metadata={"hôte": "été"}
    )
    path = tmp_path / "out.jsonl"
    store.export_jsonl(path)
    text = path.read_bytes().decode("utf-8")
    for written in ("le cache échoue: redémarrer 服务器 ✓", '"réseau"', '"hôte": "été"'):
        assert written in text
    assert "\\u" not in text
    with MemoryStore(tmp_path / "copy.db") as copy:
        copy.import_jsonl(path)
        (back,) = [copy.get(i) for (i,) in copy._core.backend.execute("SELECT id FROM memories")]
        assert (back.uid, back.content, back.tags, back.metadata) == (m.uid, m.content, m.tags, m.metadata)


def test_imported_error_texts_are_redacted_like_everything_else_stored(store, tmp_path):
    """An export from a store that kept secrets (redaction off) imported into one that redacts: the error texts a
    memory's record carries (its signed basis, its links' decisive lines and failure blocks) are stored redacted, as
    its content, history and access records are."""
    secret = "AKIAABCDEFGHIJKLMNOP"
    said = f"ValueError: login refused for key {secret}"
    rec = {
        **FIX,
        "error_basis": {"message": said, "category": "value", "excerpt": said + "\n  at app.py:3"},
        "fix_links": [{**LINK, "error_message": said, "error_instance": said + " at app.py:3"}],
    }
    store.import_jsonl(_file(tmp_path, rec))
    b = store._core.backend
    stored = [
        *b.execute("SELECT error_basis FROM memories").fetchone(),
        *b.execute("SELECT error_message, error_instance FROM fix_links").fetchone(),
    ]
    assert all(secret not in text and "REDACTED" in text.upper() for text in stored), stored
