"""The input checks behind every public call (harness_memory/validation.py, docs/architecture.md
"Errors"): each bound is accepted at its edge and refused one step past it, with a typed error; the
accepted value comes back as documented. A few are also driven through the store, where a refused
call must write nothing."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import BaseModel

from conftest import table_snapshot
from harness_memory import ContentTooLargeError, InvalidInputError, MemoryStore, validation as v

CONTROL = [chr(c) for c in list(range(0, 9)) + [0x0B, 0x0C] + list(range(0x0E, 0x20)) + [0x7F]]


def test_text_bounds_in_utf8_bytes_and_refuses_nul_surrogates_and_blank():
    assert v.text("é" * 5, "content", max_bytes=10) == "é" * 5
    with pytest.raises(ContentTooLargeError, match="content is 12 bytes; the limit is 10"):
        v.text("é" * 6, "content", max_bytes=10)
    assert v.text("  padded  ", "content", max_bytes=100) == "  padded  "  # returned as given
    for bad, msg in (
        (b"bytes", "must be a string, got bytes"),
        (None, "got NoneType"),
        ("a\x00b", "NUL"),
        ("\ud800", "lone surrogates"),
        ("   ", "must not be empty"),
        ("", "must not be empty"),
    ):
        with pytest.raises(InvalidInputError, match=msg):
            v.text(bad, "content", max_bytes=100)
    assert v.text("", "query", max_bytes=10, allow_empty=True) == ""
    assert v.text("  ", "query", max_bytes=10, allow_empty=True) == "  "


def test_ident_bounds_length_and_refuses_control_characters():
    assert v.ident("a" * 200, "agent_id") == "a" * 200
    assert v.ident(" spaced id ", "agent_id") == " spaced id "
    assert v.ident("tab\there", "agent_id") == "tab\there"  # a tab is not a control character here
    assert v.ident(None, "agent_id", optional=True) is None
    bad = ["a" * 201, "", "   ", None, 5, "line\nbreak", "carriage\rreturn", "\udc80"] + [f"x{c}y" for c in CONTROL]
    for value in bad:
        with pytest.raises(InvalidInputError):
            v.ident(value, "agent_id")


def test_scope_is_agent_or_global():
    assert v.scope("agent") == "agent" and v.scope("global") == "global"
    with pytest.raises(InvalidInputError, match="got 'public'"):
        v.scope("public")


def test_unit_float_is_a_finite_number_in_the_closed_unit_interval():
    assert v.unit_float(0, "importance") == 0.0 and isinstance(v.unit_float(1, "importance"), float)
    assert v.unit_float(1.0, "importance") == 1.0 and v.unit_float(0.25, "importance") == 0.25
    for bad in (-1e-9, 1.0000001, math.nan, math.inf, -math.inf, True, "0.5", None):
        with pytest.raises(InvalidInputError):
            v.unit_float(bad, "importance")


def test_tags_are_normalised_deduplicated_and_bounded_after_normalising():
    assert v.tags(None, max_tags=3, max_len=10) == []
    assert v.tags(["  Foo   Bar ", "foo bar", "CI"], max_tags=2, max_len=10) == ["foo bar", "ci"]
    assert v.tags(("a", "b", "a", "c"), max_tags=3, max_len=10) == ["a", "b", "c"]  # duplicates don't count
    assert v.tags(["x" * 10], max_tags=1, max_len=10) == ["x" * 10]
    assert v.tags(["  " + "x" * 10 + "  "], max_tags=1, max_len=10) == ["x" * 10]
    for bad in ("single", b"bytes", 5, ["ok", 3], ["ok", "  "], ["x" * 11], ["a", "b", "c", "d"], ["\udc80"]) + tuple(
        [f"t{c}g"] for c in CONTROL if c not in "\t\x0b\x0c\x1c\x1d\x1e\x1f"
    ):
        with pytest.raises(InvalidInputError):
            v.tags(bad, max_tags=3, max_len=10)


def test_ttl_is_a_positive_number_of_seconds_or_a_timedelta_up_to_a_hundred_years():
    assert v.ttl_seconds(None) is None
    assert v.ttl_seconds(timedelta(hours=2)) == 7200.0
    assert v.ttl_seconds(1) == 1.0 and isinstance(v.ttl_seconds(1), float)
    assert v.ttl_seconds(100 * 365 * 86400) == 100 * 365 * 86400
    for bad in (0, -5, timedelta(0), 100 * 365 * 86400 + 1, math.nan, math.inf, True, "60"):
        with pytest.raises(InvalidInputError):
            v.ttl_seconds(bad)


def nested(depth: int, kind=dict):
    value: object = "leaf"
    for _ in range(depth):
        value = {"k": value} if kind is dict else [value]
    return value


def test_nesting_is_bounded_at_32_levels_without_recursion():
    for kind in (dict, list):
        v.nesting_depth(nested(32, kind), "metadata")
        with pytest.raises(InvalidInputError, match="nested more than 32 levels"):
            v.nesting_depth(nested(33, kind), "metadata")
    v.nesting_depth(nested(3, dict), "record", max_depth=3)
    with pytest.raises(InvalidInputError):
        v.nesting_depth(nested(4, dict), "record", max_depth=3)
    with pytest.raises(InvalidInputError):
        v.nesting_depth(nested(50_000, list), "metadata")  # deep enough to break a recursive check
    v.nesting_depth("scalar", "metadata")
    v.nesting_depth((1, (2, (3,))), "metadata")


def test_metadata_is_a_json_dict_of_at_most_64_kib():
    assert v.metadata(None) == {}
    assert v.metadata({"t": (1, 2), "s": "é"}) == {"t": [1, 2], "s": "é"}  # a JSON round trip
    v.metadata({"k": "x" * (64 * 1024 - 20)})
    with pytest.raises(ContentTooLargeError, match="metadata is"):
        v.metadata({"k": "x" * (64 * 1024)})
    with pytest.raises(ContentTooLargeError):
        v.metadata({"k": "é" * (33 * 1024)})  # bytes, not characters
    for bad in ([1], "x", {"f": math.nan}, {"f": math.inf}, {"o": object()}, {"s": "\ud800"}, nested(40)):
        with pytest.raises(InvalidInputError):
            v.metadata(bad)


def test_limit_is_an_int_in_range():
    assert v.limit(1, max_limit=5) == 1 and v.limit(5, max_limit=5) == 5
    for bad in (0, 6, -1, True, 2.0, "3"):
        with pytest.raises(InvalidInputError, match=r"limit must be an int in \[1, 5\]"):
            v.limit(bad, max_limit=5)


def test_timestamp_takes_an_aware_datetime_or_a_unix_time_within_years_1_to_9999():
    assert v.timestamp(None, "since") is None
    dt = datetime(2026, 1, 1, tzinfo=UTC)
    assert v.timestamp(dt, "since") == dt.timestamp()
    plus2 = datetime(2026, 1, 1, 2, tzinfo=timezone(timedelta(hours=2)))
    assert v.timestamp(plus2, "since") == dt.timestamp()  # the same instant
    assert v.timestamp(5, "since") == 5.0 and isinstance(v.timestamp(5, "since"), float)
    assert v.timestamp(v.MIN_TIMESTAMP, "since") == v.MIN_TIMESTAMP
    assert v.timestamp(v.MAX_TIMESTAMP, "since") == v.MAX_TIMESTAMP
    assert v.timestamp(datetime(1, 1, 1, tzinfo=UTC), "since") == v.MIN_TIMESTAMP
    with pytest.raises(InvalidInputError, match="naive datetime"):
        v.timestamp(datetime(2026, 1, 1), "since")
    for bad in (v.MIN_TIMESTAMP - 1, v.MAX_TIMESTAMP + 1, math.nan, math.inf, True, "2026-01-01", 10**400):
        with pytest.raises(InvalidInputError):
            v.timestamp(bad, "since")


def test_count_and_number_bounds():
    assert v.count(0, "n") == 0 and v.count(2**53, "n") == 2**53
    for bad in (-1, 2**53 + 1, True, 1.0):
        with pytest.raises(InvalidInputError):
            v.count(bad, "n")
    assert v.number(2, "x", lo=2, hi=3) == 2.0 and v.number(3.0, "x", lo=2, hi=3) == 3.0
    for bad in (1.999, 3.001, math.nan, True, "2", 10**400):
        with pytest.raises(InvalidInputError):
            v.number(bad, "x", lo=2, hi=3)


def test_channels_are_a_non_empty_subset():
    assert v.channels(None) is None
    assert v.channels(["vector", "tags", "vector"]) == frozenset({"vector", "tags"})
    assert v.channels(("a",), allowed=("a", "b")) == frozenset({"a"})
    for bad in ("vector", b"tags", 3, [], ["vector", "sql"], [None]):
        with pytest.raises(InvalidInputError):
            v.channels(bad)


def test_path_takes_str_or_pathlike_without_nul(tmp_path):
    assert v.path(str(tmp_path / "x.db")) == tmp_path / "x.db"
    assert v.path(tmp_path) == tmp_path
    for bad in (b"/tmp/x", "", "   ", "a\x00b", 5, None, "\udc80"):
        with pytest.raises(InvalidInputError):
            v.path(bad)


def test_model_errors_name_the_fields_never_the_values():
    class Cfg(BaseModel):
        port: int
        token: str

    ok = Cfg(port=1, token="t")
    assert v.model(Cfg, ok, "config") is ok
    assert v.model(Cfg, {"port": 2, "token": "x"}, "config") == Cfg(port=2, token="x")
    with pytest.raises(InvalidInputError) as e:
        v.model(Cfg, {"port": "hunter2-not-a-port", "token": 5}, "config")
    assert "port" in str(e.value) and "token" in str(e.value) and "hunter2" not in str(e.value)
    assert str(e.value).startswith("invalid config: ")


def test_boolean_memory_id_and_types():
    assert v.boolean(True, "f") is True and v.boolean(False, "f") is False
    for bad in (1, 0, "true", None):
        with pytest.raises(InvalidInputError):
            v.boolean(bad, "f")
    assert v.memory_id(1) == 1 and v.memory_id(2**63 - 1) == 2**63 - 1
    for bad in (0, -1, 2**63, True, 1.0, "1"):
        with pytest.raises(InvalidInputError):
            v.memory_id(bad)
    check = lambda t: t.lower()  # noqa: E731
    assert v.types_list(None, check) is None
    assert v.types_list("Failure", check) == ["failure"]
    assert v.types_list(["A", "a", "b"], check) == ["a", "b"]
    # the message says what to pass instead: None means every type
    with pytest.raises(InvalidInputError) as empty:
        v.types_list([], check)
    assert str(empty.value) == "types must not be empty (pass None for all types)"
    with pytest.raises(InvalidInputError) as not_a_list:
        v.types_list(5, check)
    assert str(not_a_list.value) == "types must be a list of type names"


def test_show_is_bounded_and_never_raises():
    class Hostile:
        def __repr__(self):
            raise RuntimeError("no")

    assert v.show(Hostile()).startswith("<Hostile")
    assert len(v.show("x" * 10_000)) < 80
    assert len(v.show(list(range(10_000)))) < 80
    assert v.show("public") == "'public'"


def test_a_refused_call_through_the_store_writes_nothing(db, clock):
    with MemoryStore(db, clock=clock) as s:
        s.remember("baseline memory", type="failure", agent_id="a", tags=["x"])
        before = table_snapshot(s)
        for kwargs in (
            {"agent_id": "a\x01"},
            {"agent_id": "a", "tags": ["ok", "bad\x07tag"]},
            {"agent_id": "a", "tags": ["t"] * 3 + [f"t{i}" for i in range(40)]},
            {"agent_id": "a", "importance": 1.5},
            {"agent_id": "a", "ttl": -1},
            {"agent_id": "a", "metadata": {"k": "x" * (70 * 1024)}},
            {"agent_id": "a", "scope": "all"},
            {"agent_id": "a", "key": "k\x00"},
            {"agent_id": "a", "namespace": "n" * 201},
        ):
            with pytest.raises(InvalidInputError):
                s.remember("a refused memory", type="failure", **kwargs)
        with pytest.raises(ContentTooLargeError):
            s.remember("x" * (s.settings.max_content_bytes + 1), type="failure", agent_id="a")
        with pytest.raises(InvalidInputError):
            s.recall("q", agent_id="a", since=datetime(2026, 1, 1))
        assert table_snapshot(s) == before
        assert (
            s.recall(
                "baseline",
                agent_id="a",
                since=datetime(2000, 1, 1, tzinfo=UTC),
                until=datetime(9999, 1, 1, tzinfo=UTC),
                record=False,
            )[0].memory.content
            == "baseline memory"
        )


def test_path_arguments_of_the_store_go_through_the_same_check(db, clock, tmp_path):
    with MemoryStore(db, clock=clock) as s:
        with pytest.raises(InvalidInputError):
            s.export_jsonl(b"/tmp/x.jsonl")
        assert s.export_jsonl(Path(tmp_path) / "out.jsonl") == 0


@pytest.mark.parametrize(
    "field,value",
    [
        ("agent_id", "a\x01"),
        ("namespace", "n\x02"),
        ("importance", 2.0),
        ("task_id", "t\x03"),
        ("session_id", ""),
        ("key", "k\n"),
        ("thread_id", "x" * 201),
        ("task_signature", 5),
        ("scope", "everyone"),
        ("ttl", 0),
        ("metadata", [1]),
        ("tags", "one-string"),
        ("content", "\x00"),
    ],
)
def test_a_refused_remember_names_the_field(store, field, value):
    kwargs = {"type": "failure", "agent_id": "a", field: value}
    content = kwargs.pop("content", "a memory")
    with pytest.raises(
        InvalidInputError,
        match=field
        if field not in ("tags", "content")
        else ("tags must be a list" if field == "tags" else "content must not contain NUL"),
    ):
        store.remember(content, **kwargs)


def test_messages_name_what_was_wrong():
    with pytest.raises(InvalidInputError, match="tags must be valid Unicode text"):
        v.tags(["\udc80"], max_tags=3, max_len=10)
    with pytest.raises(InvalidInputError, match="metadata must be a dict"):
        v.metadata([1])
    with pytest.raises(InvalidInputError, match="^path must be a path"):
        v.path(b"/tmp/x")
    with pytest.raises(InvalidInputError, match="ttl must be at most 100 years"):
        v.ttl_seconds(101 * 365 * 86400)
    assert v.channels(["keyword", "signature"]) == frozenset({"keyword", "signature"})  # the default set


def test_a_structure_of_too_many_containers_is_refused_without_recursing():
    with pytest.raises(ContentTooLargeError, match="too many nested containers"):
        v.nesting_depth({"k": [[]] * 1_000_001}, "metadata")  # one empty list, counted at each place
