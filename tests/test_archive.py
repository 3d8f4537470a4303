"""store.archive() / store.restore(): a curator's archiving by hand, on both backends (issue 13)."""

from __future__ import annotations

import pytest

from conftest import table_snapshot
from harness_memory import InvalidInputError, MemoryNotFoundError, MemoryStore
from harness_memory.testing import ManualClock

DAY = 86400.0


def _log(store: MemoryStore, mid: int) -> list[tuple]:
    return [
        tuple(r)
        for r in store._core.backend.execute(
            "SELECT access_type, agent_id, outcome FROM memory_access_log WHERE memory_id = ? AND access_type = 'updated' "
            "ORDER BY id",
            (mid,),
        ).fetchall()
    ]


def _ids(store: MemoryStore, query: str, **kw) -> set[int]:
    return {h.memory.id for h in store.recall(query, agent_id="a", record=False, **kw)}


def test_archive_hides_from_recall_and_restore_brings_it_back(store):
    m = store.remember("the flaky gradle daemon needs --no-daemon on CI", type="failure", agent_id="a", tags=["gradle"])
    other = store.remember("gradle caches live in ~/.gradle", type="decision", agent_id="a")
    assert m.id in _ids(store, "gradle daemon")
    got = store.archive(m.id)
    assert got.archived and got.id == m.id and got.content == m.content
    # every channel leaves it out: keyword, vector, tags
    assert m.id not in _ids(store, "gradle daemon")
    assert m.id not in _ids(store, "gradle daemon", channels=["vector"])
    assert m.id not in _ids(store, "", tags=["gradle"])
    assert m.id in _ids(store, "gradle daemon", include_archived=True)
    assert other.id in _ids(store, "gradle daemon")
    assert store.stats()["archived"] == 1
    assert _log(store, m.id) == [("updated", None, "archived")]

    back = store.restore(m.id)
    assert not back.archived and back.relevance_score >= 0.5
    assert m.id in _ids(store, "gradle daemon")
    assert m.id in _ids(store, "gradle daemon", channels=["vector"])
    assert _log(store, m.id) == [("updated", None, "archived"), ("updated", None, "restored")]


def test_archive_and_restore_are_idempotent(store):
    m = store.remember("archive me twice", type="context", agent_id="a")
    assert not store.restore(m.id).archived  # a live memory: nothing to restore, nothing written
    assert _log(store, m.id) == []
    store.archive(m.id)
    before = table_snapshot(store)
    again = store.archive(m.id)
    assert again.archived
    assert table_snapshot(store) == before  # no second log row, nothing else
    store.restore(m.id)
    before = table_snapshot(store)
    store.restore(m.id)
    assert table_snapshot(store) == before


def test_archive_pauses_decay_and_restore_resumes_it(db):
    clock = ManualClock()
    with MemoryStore(db, clock=clock) as s:
        m = s.remember("a memory a curator archives", type="failure", agent_id="a")
        clock.advance(10 * DAY)
        archived = s.archive(m.id)
        assert archived.relevance_score < 1.0  # decayed up to the moment it was archived
        clock.advance(100 * DAY)
        s.run_job("decay")
        assert s.get(m.id).relevance_score == pytest.approx(archived.relevance_score)  # paused while archived
        assert s.get(m.id).archived
        back = s.restore(m.id)
        assert back.relevance_score == pytest.approx(max(archived.relevance_score, 0.5))
        clock.advance(10 * DAY)
        s.run_job("decay")
        assert s.get(m.id).relevance_score < back.relevance_score  # decays again from the restore


def test_refusals_are_typed_and_change_nothing(store):
    mine = store.remember("agent a's private note", type="decision", agent_id="a")
    theirs = store.remember("agent b's private note", type="decision", agent_id="b")
    shared = store.remember("a global note from b", type="decision", agent_id="b", scope="global")
    pinned = store.remember("a pinned note", type="decision", agent_id="a")
    store.pin(pinned.id)
    before = table_snapshot(store)
    for call, args, kw, err in [
        ("archive", (0,), {}, InvalidInputError),
        ("archive", ("1",), {}, InvalidInputError),
        ("archive", (True,), {}, InvalidInputError),
        ("restore", (-3,), {}, InvalidInputError),
        ("archive", (mine.id,), {"agent_id": ""}, InvalidInputError),
        ("restore", (mine.id,), {"agent_id": 7}, InvalidInputError),
        ("archive", (10_000,), {}, MemoryNotFoundError),
        ("restore", (10_000,), {}, MemoryNotFoundError),
        ("archive", (theirs.id,), {"agent_id": "a"}, MemoryNotFoundError),  # not visible to a
        ("archive", (shared.id,), {"agent_id": "a"}, MemoryNotFoundError),  # visible, but b's
        ("archive", (pinned.id,), {}, InvalidInputError),
    ]:
        with pytest.raises(err):
            getattr(store, call)(*args, **kw)
    assert table_snapshot(store) == before
    assert not any(store.get(x.id).archived for x in (mine, theirs, shared, pinned))
    # the owner may; so may a caller without an agent (an operator, the dashboard)
    assert store.archive(mine.id, agent_id="a").archived
    assert _log(store, mine.id) == [("updated", "a", "archived")]
    assert store.archive(theirs.id).archived
    store.pin(pinned.id, False)
    assert store.archive(pinned.id).archived
    with pytest.raises(MemoryNotFoundError):
        store.restore(theirs.id, agent_id="a")
    assert not store.restore(mine.id, agent_id="a").archived


def test_archive_seen_by_another_process(db):
    """The in-process vector index of a second store follows the archive (the change log)."""
    with MemoryStore(db) as a, MemoryStore(db) as b:
        m = a.remember("the vector index must follow an archive", type="decision", agent_id="a")
        assert m.id in _ids(b, "vector index archive", channels=["vector"])
        a.archive(m.id)
        assert m.id not in _ids(b, "vector index archive", channels=["vector"])
        a.restore(m.id)
        assert m.id in _ids(b, "vector index archive", channels=["vector"])
