from __future__ import annotations

import gc
import hashlib
import inspect
import json
import multiprocessing as mp
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings as hypothesis_settings

from harness_memory import MemoryStore, Settings
from harness_memory.testing import FakeEmbedder, ManualClock

# the properties check what a function returns, never how fast: no per-example deadline, which a loaded
# machine (CI's two workers, mutation runs beside a suite) would otherwise turn into spurious failures
hypothesis_settings.register_profile("harness-memory", deadline=None)
hypothesis_settings.load_profile("harness-memory")


def pytest_configure(config):
    """Compile the library's modules to bytecode once, before any worker starts. Where
    PYTHONDONTWRITEBYTECODE is set (this machine and its CI set it) Python never writes the cache
    and every process the suite starts -- each xdist worker, CLI call, spawned worker and server --
    compiled the library's ~18,000 lines from source again (~0.35 s of CPU a process); it still
    reads a cache that exists. Nothing else changes: the same source, checked by its timestamps."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has done it
        return
    import compileall
    from pathlib import Path

    import harness_memory

    compileall.compile_dir(Path(harness_memory.__file__).parent, quiet=1)


def worker_processes():
    """The multiprocessing context of the tests' worker processes: each worker is a new process that
    inherits nothing from the test process (no connection, lock, thread or open store), forked from
    multiprocessing's fork server -- a fresh interpreter that imported the library and the tests'
    helpers once -- instead of a spawned interpreter importing them all again (~1.5 s of CPU each).
    The server keeps the environment of its start: a test must hand a worker what it needs as
    arguments, never through ``os.environ``."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["harness_memory", "harness_memory.store", "conftest"])
    return ctx


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "memory.db"


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def settings():
    return Settings(extra_types=["discovery", "deadend", "plan", "feedback", "insight"])


_PG_SCHEMA = pytest.StashKey[tuple[str, str]]()


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path):
    """A fresh database on each backend: a SQLite file path, or a PostgreSQL URL (a fresh schema
    on the session's server). Tests taking ``db`` or ``store`` are the contract suite: they run
    against every backend."""
    if request.param == "sqlite":
        yield tmp_path / "memory.db"
        return
    import pgtestdb

    if "db" in inspect.signature(request.function).parameters:  # the test takes ``db``: a new schema
        url, schema = pgtestdb.new_schema()
        yield url
        pgtestdb.drop_schema(schema)
        return
    # reached through ``store`` or ``backend_name`` only: an emptied migrated schema will do
    kind = request.getfixturevalue("settings").model_dump_json() + str(request.getfixturevalue("clock")())
    url, schema = pgtestdb.migrated_or_new(kind)
    request.node.stash[_PG_SCHEMA] = (kind, schema)
    yield url
    pgtestdb.release(kind, schema)


@pytest.fixture
def backend_name(db) -> str:
    return "sqlite" if not isinstance(db, str) else "postgres"


@pytest.fixture
def store(request, db, settings, clock):
    with MemoryStore(db, settings=settings, clock=clock) as s:
        kind_schema = request.node.stash.get(_PG_SCHEMA, None)
        if kind_schema is not None:
            import pgtestdb

            pgtestdb.note_head(*kind_schema)
        yield s


@pytest.fixture
def fake_store(tmp_path, settings, clock):
    with MemoryStore(tmp_path / "fake.db", settings=settings, clock=clock, embedder=FakeEmbedder(32)) as s:
        yield s


def _snapshot_tables(store: MemoryStore) -> list[tuple[str, str]]:
    """``(table, query)`` for every table that holds the store's state, read from the schema itself
    (tables added by later migrations are included without listing them here). SQLite: every
    ordinary and virtual table; an FTS5 or vec0 table's shadow tables are its storage, so the
    virtual table is read instead, and an ``fts5vocab`` table is derived from its FTS table.
    PostgreSQL: every base table of the store's schema (its FTS and vector tables are ordinary)."""
    b = store._core.backend
    if b.dialect == "sqlite":
        listed = [(r[1], r[2]) for r in b.execute("PRAGMA main.table_list")]
        sql = {r[0]: r[1] or "" for r in b.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")}
        virtual = [n for n, kind in listed if kind == "virtual"]
        out = []
        for name, kind in sorted(listed):
            if kind not in ("table", "virtual") or name == "sqlite_schema" or name.startswith("sqlite_temp"):
                continue
            if any(name.startswith(v + "_") for v in virtual):
                continue  # a shadow table (vec0 reports some of its own as ordinary tables)
            if kind == "virtual" and "fts5vocab" in sql.get(name, "").lower():
                continue
            fts = "using fts5" in sql.get(name, "").lower()  # its rowid is the memory's id; vec0 has a key column
            out.append((name, f'SELECT {"rowid, " if fts else ""}* FROM "{name}"'))
        return out
    rows = b.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_type = 'BASE TABLE' ORDER BY table_name"
    )
    return [(r[0], f'SELECT * FROM "{r[0]}"') for r in rows]


def _canonical(value):
    if hasattr(value, "tolist"):  # a vector read back as a numpy array: repr would elide its middle
        return tuple(value.tolist())
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def table_snapshot(store: MemoryStore) -> dict[str, tuple[int, str]]:
    """Every table's row count and a digest of its rows (order-independent), for the properties
    "a refused call changes nothing": a refused write that updated a row in place, or wrote to a
    table added by a later migration, shows up here."""
    b = store._core.backend
    out = {}
    for name, query in _snapshot_tables(store):
        rows = sorted(repr(tuple(_canonical(v) for v in row)) for row in b.execute(query))
        out[name] = (len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16])
    return out


def table_counts(store: MemoryStore) -> dict[str, int]:
    """Row counts of every table (the same tables as :func:`table_snapshot`)."""
    b = store._core.backend
    return {name: b.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0] for name, _ in _snapshot_tables(store)}


def table_names(store: MemoryStore) -> list[str]:
    """The store's tables (either backend), sorted."""
    b = store._core.backend
    if b.dialect == "sqlite":
        sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    else:
        sql = (
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_type = 'BASE TABLE' ORDER BY table_name"
        )
    return [r[0] for r in b.execute(sql)]


@pytest.fixture(scope="session", autouse=True)
def _cli_servers():
    """The command line's warm-start servers (harness_memory/cli_server.py) that this session's CLI
    calls start live in a runtime folder of the session, and stop with it. Calls that keep this
    environment run in-process (HARNESS_MEMORY_CLI_SERVER=0); calls that drop the HARNESS_MEMORY_
    variables (the hook and ``run`` tests) use the servers, as a user's calls do."""
    import os
    import shutil
    import signal
    import tempfile
    from pathlib import Path

    runtime = Path(tempfile.mkdtemp(prefix="hm-xdg-", dir="/tmp"))  # short: a socket path has at most 107 bytes
    saved = {k: os.environ.get(k) for k in ("XDG_RUNTIME_DIR", "HARNESS_MEMORY_CLI_SERVER")}
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    os.environ.setdefault("HARNESS_MEMORY_CLI_SERVER", "0")
    yield
    for pid_file in runtime.glob("harness-memory/*.pid"):
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass  # it has exited already
    shutil.rmtree(runtime, ignore_errors=True)
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


# varied short memories over a small vocabulary, spread over three agents, two types and both scopes: enough
# for every recall filter to matter (tests/test_recall_scale.py, tests/test_vector_index_behaviour.py)
NOTE_WORDS = (
    "build test deploy cache network retry timeout lockfile module import docker python rust go java "
    "compile link flaky webhook payment queue worker schema migrate index vector keyword fuse rank"
).split()


def note_items(n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [
        {
            "content": f"note {i}: " + " ".join(rng.choice(NOTE_WORDS, 8)),
            "type": ("success", "failure")[i % 2],
            "agent_id": f"a{i % 3}",
            "scope": "global" if i % 5 == 0 else "agent",
        }
        for i in range(n)
    ]


def cpu_seconds(f, *args) -> float:
    """CPU seconds of ``f(*args)`` alone (for the linear-time bounds): a garbage collection of what earlier tests in the
    same worker left (a full pass over a large heap takes tenths of a second) is not the call's cost, so the collector
    waits."""
    gc.collect()
    gc.disable()
    try:
        t = time.process_time()
        f(*args)
        return time.process_time() - t
    finally:
        gc.enable()


def older_export(src, dst, version: int, *, access: tuple[str, ...] = (), links: tuple[str, ...] = ()) -> None:
    """Write ``src``'s JSONL export to ``dst`` as an export of an older ``version`` would have it: without the access
    records' fields ``access`` and the error->fix links' fields ``links``, which that version did not write."""
    lines = [json.loads(x) for x in Path(src).read_text().splitlines()]
    out = [dict(lines[0], version=version)]
    for rec in lines[1:]:
        if rec.get("record") == "access":
            rec = {k: v for k, v in rec.items() if k not in access}
        if "fix_links" in rec:
            rec = dict(rec, fix_links=[{k: v for k, v in ln.items() if k not in links} for ln in rec["fix_links"]])
        out.append(rec)
    Path(dst).write_text("".join(json.dumps(x) + "\n" for x in out))
