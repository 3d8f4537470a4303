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


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path):
    """A fresh database on each backend: a SQLite file path, or a PostgreSQL URL (a fresh schema
    on the session's server). Tests taking ``db`` or ``store`` are the contract suite: they run
    against every backend."""
    if request.param == "sqlite":
        yield tmp_path / "memory.db"
        return
    from pgtestdb import drop_schema, new_schema

    url, schema = new_schema()
    yield url
    drop_schema(schema)


@pytest.fixture
def backend_name(db) -> str:
    return "sqlite" if not isinstance(db, str) else "postgres"


@pytest.fixture
def store(db, settings, clock):
    with MemoryStore(db, settings=settings, clock=clock) as s:
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


def table_names(store: MemoryStore) -> list[str]:
    """The store's tables (either backend), sorted."""
    b = store._core.backend
    if b.dialect == "sqlite":
        sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    else:
        sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() " \
              "AND table_type = 'BASE TABLE' ORDER BY table_name"
    return [r[0] for r in b.execute(sql)]
