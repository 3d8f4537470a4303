from __future__ import annotations

import pytest

from harness_memory import MemoryStore, Settings
from harness_memory.testing import FakeEmbedder, ManualClock


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "memory.db"


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def settings():
    return Settings(extra_types=["discovery", "deadend", "plan", "feedback", "insight"])


@pytest.fixture
def store(db_path, settings, clock):
    with MemoryStore(db_path, settings=settings, clock=clock) as s:
        yield s


@pytest.fixture
def fake_store(tmp_path, settings, clock):
    with MemoryStore(tmp_path / "fake.db", settings=settings, clock=clock, embedder=FakeEmbedder(32)) as s:
        yield s


def table_counts(store: MemoryStore) -> dict[str, int]:
    """Row counts of every table that a failed write must leave untouched."""
    b = store._core.backend
    out = {}
    for t in ("memories", "memory_tags", "memory_history", "memory_merges", "memory_access_log", "vector_changes",
              "memory_vectors"):
        out[t] = b.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
    out["fts"] = b.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0]
    return out
