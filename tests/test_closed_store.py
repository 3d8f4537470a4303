"""A store used after ``close()`` (or after its ``with`` block) raises the library's typed
``StoreClosedError`` on every backend, not the driver's error; closing twice is harmless."""

from __future__ import annotations

import pytest

from harness_memory import MemoryStore, StorageError, StoreClosedError


def test_every_verb_of_a_closed_store_raises_the_typed_error(db, settings, clock):
    with MemoryStore(db, settings=settings, clock=clock) as s:
        m = s.remember("restart the worker after a deploy", type="success", agent_id="a")
    s.close()  # a second close does nothing
    calls = [
        lambda: s.remember("x", type="success", agent_id="a"),
        lambda: s.recall("restart", agent_id="a"),
        lambda: s.get(m.id),
        lambda: s.error_signature("ValueError: bad"),
        lambda: s.on_task_error({"id": "t", "title": "deploy", "agent_id": "a"}, "ValueError: bad"),
    ]
    for call in calls:
        with pytest.raises(StoreClosedError, match="closed"):
            call()
    assert issubclass(StoreClosedError, StorageError)
