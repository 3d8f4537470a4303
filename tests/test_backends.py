"""The storage seam: targets (paths and URLs), PostgreSQL specifics (connections, restarts, the
extension), and behaviour across processes on every backend: 8 processes writing and recalling at
once, a writer killed mid-transaction, duplicate and keyed races, jobs run once per period."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import pgtestdb
from conftest import worker_processes
from harness_memory import (
    ConfigurationError,
    DatabaseOpenError,
    InvalidInputError,
    MemoryStore,
    Settings,
    StorageError,
)
from harness_memory.backend import parse_target, safe_url

CTX = worker_processes()  # a new process per worker: no inherited connections


# -- targets ---------------------------------------------------------------------------------------


def test_targets_name_one_backend(tmp_path):
    assert parse_target(str(tmp_path / "a.db")).kind == "sqlite"
    assert parse_target(tmp_path / "a.db").path == tmp_path / "a.db"
    assert parse_target("sqlite:///rel/a.db").path == Path("rel/a.db")
    assert parse_target("sqlite:////abs/a.db").path == Path("/abs/a.db")
    t = parse_target("postgres://u:pw@h:5432/db")
    assert (t.kind, t.url) == ("postgresql", "postgresql://u:pw@h:5432/db")
    assert "pw" not in t.display() and "u@h:5432/db" in t.display()
    assert "secret" not in safe_url("postgresql://h/db?user=u&password=secret")


@pytest.mark.parametrize(
    "url", ["http://example.com/memory.db", "mysql://u@h/db", "sqlite://", "sqlite:///", "file:///tmp/x.db"]
)
def test_any_other_url_is_a_typed_error_and_creates_nothing(tmp_path, monkeypatch, url):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError):
        MemoryStore(url)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("url", ["postgresql://hm:secret@db/x?nosuchoption=1", "postgresql://hm:secret@[::1/x"])
def test_a_malformed_postgres_url_is_a_typed_error_without_the_password(url):
    """libpq refuses it before any connection: the library's error, naming the URL without its password."""
    with pytest.raises(InvalidInputError, match="invalid PostgreSQL URL") as info:
        MemoryStore(url)
    assert "secret" not in str(info.value)


def test_postgres_statements_keep_percent_signs(pg_url):
    """The package's statements use ``?`` parameters; a ``%`` (the modulo operator, a LIKE pattern) must
    reach PostgreSQL as itself, not as a psycopg placeholder."""
    with MemoryStore(pg_url) as s:
        row = s._core.backend.execute("SELECT 7 % 3, 'a%b' LIKE 'a%', ?", (5,)).fetchone()
        assert tuple(row) == (1, True, 5)


def test_sqlite_url_opens_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with MemoryStore("sqlite:///sub/m.db") as s:
        s.remember("kept", type="success", agent_id="a")
    assert (tmp_path / "sub" / "m.db").exists()


def test_sqlite_never_imports_the_postgres_driver(tmp_path):
    code = (
        "import sys; from harness_memory import MemoryStore\n"
        f"with MemoryStore({str(tmp_path / 'x.db')!r}) as s: s.remember('x', type='success', agent_id='a')\n"
        "assert not any(m.startswith(('psycopg', 'pgvector')) for m in sys.modules), "
        "[m for m in sys.modules if m.startswith('psycopg')]"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# -- PostgreSQL connections -------------------------------------------------------------------------


@pytest.fixture
def pg_url():
    url, schema = pgtestdb.new_schema()
    yield url
    pgtestdb.drop_schema(schema)


def test_environment_and_settings_take_a_url(pg_url, monkeypatch):
    monkeypatch.setenv("HARNESS_MEMORY_DB", pg_url)
    with MemoryStore() as s:
        assert s._core.backend.dialect == "postgresql"
        s.remember("through the environment", type="success", agent_id="a")
    with MemoryStore(settings=Settings(db=pg_url)) as s:
        assert [m.content for m in s.get_by_type("success", agent_id="a")] == ["through the environment"]


def test_unreachable_host_is_a_typed_error_without_the_password():
    t0 = time.monotonic()
    with pytest.raises(DatabaseOpenError) as e:
        MemoryStore("postgresql://someone:hunter2-secret@127.0.0.1:9/db?connect_timeout=2")
    assert time.monotonic() - t0 < 15
    assert "hunter2" not in str(e.value) and "cannot reach" in str(e.value)


def test_unknown_role_is_a_typed_error_without_the_password():
    base = pgtestdb.base_url()
    url = base.replace("postgresql://postgres:@", "postgresql://nobody_here:hunter2-secret@")
    with pytest.raises(DatabaseOpenError) as e:
        MemoryStore(url)
    assert "hunter2" not in str(e.value) and "nobody_here" in str(e.value)


def test_restart_between_two_calls(pg_url):
    srv = pgtestdb.server()
    if srv is None:
        pytest.skip("the server at HARNESS_MEMORY_TEST_PG_URL is not ours to restart")
    import pgserver

    with MemoryStore(pg_url) as s:
        first = s.remember("before the restart", type="success", agent_id="a")
        # stop, then start through pgserver, so the server it stops at the session's end is the new one
        # (a bare `pg_ctl restart` left the restarted postmaster running after the session)
        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=srv.pgdata, user=srv.system_user)
        srv.ensure_postgres_running()
        second = s.remember("after the restart", type="success", agent_id="a")
        hits = s.recall("restart", agent_id="a")
        assert {h.memory.id for h in hits} == {first.id, second.id}


def test_role_that_may_not_create_the_extension_is_told_what_to_do():
    import psycopg

    base = pgtestdb.base_url()
    with psycopg.connect(base, autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS hm_noext")
        c.execute("DROP ROLE IF EXISTS hm_limited")
        c.execute("CREATE ROLE hm_limited LOGIN")
        c.execute("CREATE DATABASE hm_noext OWNER hm_limited")
    try:
        url = base.replace("postgresql://postgres:@/postgres", "postgresql://hm_limited@/hm_noext")
        with pytest.raises(ConfigurationError, match="CREATE EXTENSION vector"):
            MemoryStore(url)
    finally:
        with psycopg.connect(base, autocommit=True) as c:
            c.execute("DROP DATABASE IF EXISTS hm_noext")
            c.execute("DROP ROLE IF EXISTS hm_limited")


def test_a_role_without_the_temporary_privilege_writes_batches():
    """remember_many stages large batches in a temporary table; a role whose TEMPORARY privilege
    was revoked (a hardened database) writes them through plain statements instead."""
    import psycopg

    base = pgtestdb.base_url()
    with psycopg.connect(base, autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS hm_notemp")
        c.execute("DROP ROLE IF EXISTS hm_notemp")
        c.execute("CREATE ROLE hm_notemp LOGIN")
        c.execute("CREATE DATABASE hm_notemp")
        c.execute("REVOKE TEMPORARY ON DATABASE hm_notemp FROM PUBLIC")
    try:
        db = base.replace("postgresql://postgres:@/postgres", "postgresql://postgres:@/hm_notemp")
        with psycopg.connect(db, autocommit=True) as c:
            c.execute("CREATE EXTENSION vector")
            c.execute("CREATE SCHEMA hm AUTHORIZATION hm_notemp")
        url = pgtestdb.with_schema(db.replace("postgresql://postgres:@/", "postgresql://hm_notemp@/"), "hm")
        with psycopg.connect(url) as c:  # the role may not stage
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                c.execute("CREATE TEMP TABLE t (x int)")
        items = [
            {"content": f"deploy note {i}: region {i * 7} rolled back", "type": "success", "agent_id": "a"}
            for i in range(40)
        ]
        with MemoryStore(url) as s:
            first = s.remember_many(items)
            again = s.remember_many(items[:35])  # exact duplicates: reinforced, not added
            assert [m.id for m in again] == [m.id for m in first[:35]]
            assert s.stats()["memories"] == 40
            hits = s.recall("deploy note 17 region 119", agent_id="a", limit=3)
            assert hits and hits[0].memory.id == first[17].id
    finally:
        with psycopg.connect(base, autocommit=True) as c:
            c.execute("DROP DATABASE IF EXISTS hm_notemp")
            c.execute("DROP ROLE IF EXISTS hm_notemp")


def test_cli_init_takes_a_postgres_url(pg_url):
    from typer.testing import CliRunner

    from harness_memory.cli import app

    r = CliRunner().invoke(app, ["init", "--db", pg_url, "--json"])
    assert r.exit_code == 0, r.output
    assert '"db": "postgresql://postgres@' in r.output
    with MemoryStore(pg_url) as s:
        assert s._core.backend.table_exists("memories")


def test_filtered_vector_search_returns_k_visible_rows(pg_url):
    """A scoped query never returns fewer than k rows when k are visible, however selective the
    filter (the HNSW scan iterates; an exhausted scan falls back to the exact search)."""
    rng = np.random.default_rng(1)
    with MemoryStore(pg_url) as s:
        items = [
            {"content": f"crowd memory {i} {rng.integers(1e9)}", "type": "success", "agent_id": "crowd"}
            for i in range(3000)
        ]
        items += [
            {"content": f"rare memory {i} {rng.integers(1e9)}", "type": "success", "agent_id": "rare"}
            for i in range(12)
        ]
        s.remember_many(items)
        b = s._core.backend
        q = s.embedder.embed_batch(["crowd memory"])[0]
        got = b.vector_search(
            np.asarray(q),
            namespace="default",
            k=10,
            agent_id="rare",
            include_global=False,
            types=None,
            include_archived=False,
        )
        assert len(got) == 10
        rare = {m for (m,) in b.execute("SELECT id FROM memories WHERE agent_id = 'rare'")}
        assert {m for m, _ in got} <= rare


def test_url_options_choose_the_vector_search_settings(pg_url):
    """Each pooled session searches with the library's HNSW settings and no parallel workers,
    unless the URL's options set one (an operator trading search time for overlap)."""
    from urllib.parse import quote

    show = (
        "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan'), "
        "current_setting('max_parallel_workers_per_gather')"
    )
    with MemoryStore(pg_url) as s:
        s.remember("the index is searched with the defaults", type="success", agent_id="a")
        assert tuple(s._core.backend.execute(show).fetchone()) == ("100", "relaxed_order", "0")
    mine = quote("-c hnsw.ef_search=400 -c hnsw.iterative_scan=strict_order ", safe="")
    url = pg_url.replace("options=", f"options={mine}", 1)
    assert url != pg_url
    with MemoryStore(url) as s:
        assert tuple(s._core.backend.execute(show).fetchone()) == ("400", "strict_order", "0")
        hits = s.recall("searched with the defaults", agent_id="a")
        assert [h.memory.content for h in hits] == ["the index is searched with the defaults"]


# -- across processes (every backend) -------------------------------------------------------------


def _worker(db, k: int, n: int, out) -> None:
    try:
        with MemoryStore(db, settings=Settings(busy_timeout_ms=60_000)) as s:
            for i in range(n):
                s.remember(
                    f"worker {k} learned fact {i} about the flaky build",
                    type="success",
                    agent_id=f"w{k}",
                    tags=["fleet"],
                )
                s.recall("flaky build", agent_id=f"w{k}", limit=5)
            s.remember("everyone saw the same proxy error", type="failure", agent_id="shared", scope="global")
            s.remember(f"the keyed note, version by {k}", type="decision", agent_id="shared", key="note")
        out.put(("ok", k))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the test with it
        out.put(("error", f"{type(exc).__name__}: {exc}"))


def test_eight_processes_write_and_recall_at_once(db):
    with MemoryStore(db):
        pass  # schema first: the race under test is on the rows
    out = CTX.Queue()
    procs = [CTX.Process(target=_worker, args=(db, k, 12, out)) for k in range(8)]
    for p in procs:
        p.start()
    results = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(60)
    assert sorted(results) == [("ok", k) for k in range(8)], results
    with MemoryStore(db) as s:
        b = s._core.backend
        assert b.execute("SELECT COUNT(*) FROM memories WHERE agent_id LIKE 'w%'").fetchone()[0] == 8 * 12
        shared = b.execute("SELECT id FROM memories WHERE content = 'everyone saw the same proxy error'").fetchall()
        assert len(shared) == 1  # one row, the seven others merged into it
        assert b.execute("SELECT COUNT(*) FROM memory_merges WHERE memory_id = ?", shared[0]).fetchone()[0] == 7
        keyed = b.execute("SELECT version FROM memories WHERE key = 'note'").fetchall()
        assert keyed == [(8,)]  # one row, updated in place seven times
        assert b.execute("SELECT COUNT(*) FROM memory_history").fetchone()[0] == 7
        assert b.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0] == 8 * 12 + 2
        assert b.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0] == 8 * 12 + 2


def _killed_writer(db, ready) -> None:
    with MemoryStore(db) as s:
        s.remember("committed before the kill", type="success", agent_id="a")
        with s._core.backend.write() as c:
            c.execute("UPDATE memories SET content = 'half-written' WHERE agent_id = 'a'")
            ready.set()
            time.sleep(600)


def test_writer_killed_mid_transaction_leaves_nothing_half_done(db):
    with MemoryStore(db):
        pass
    ready = CTX.Event()
    p = CTX.Process(target=_killed_writer, args=(db, ready))
    p.start()
    assert ready.wait(120)
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    with MemoryStore(db, settings=Settings(busy_timeout_ms=30_000)) as s:
        t0 = time.monotonic()
        s.remember("written after the kill", type="success", agent_id="b")  # the lock was released
        assert time.monotonic() - t0 < 20
        contents = {r[0] for r in s._core.backend.execute("SELECT content FROM memories")}
    assert contents == {"committed before the kill", "written after the kill"}


# -- moving between backends ----------------------------------------------------------------------


def test_export_from_sqlite_imports_whole_into_postgres(tmp_path, pg_url):
    with MemoryStore(tmp_path / "a.db") as a:
        m = a.remember(
            "pin the proxy",
            type="success",
            agent_id="a",
            tags=["net"],
            key="proxy",
            error="ProxyError: Cannot connect to proxy 10.0.0.1:3128",
        )
        a.remember("pin the proxy and the CA", type="success", agent_id="a", key="proxy")
        a.apply(m.id, helpful=True, agent_id="a")
        a.recall("proxy", agent_id="a")
        a.export_jsonl(tmp_path / "a.jsonl")
    with MemoryStore(pg_url) as b:
        b.import_jsonl(tmp_path / "a.jsonl")
        b.export_jsonl(tmp_path / "b.jsonl")
        again = b.import_jsonl(tmp_path / "a.jsonl")  # idempotent
        assert again.inserted == 0
    a_lines = (tmp_path / "a.jsonl").read_text().splitlines()
    b_lines = (tmp_path / "b.jsonl").read_text().splitlines()
    assert len(a_lines) == len(b_lines)
    assert a_lines[1:] == b_lines[1:]  # every record (history, access log, links) the same; line 1 is the header


def test_storage_errors_never_show_the_password(pg_url):
    url = pg_url.replace("postgresql://postgres:@", "postgresql://postgres:hunter2-secret@")
    with MemoryStore(url) as s:
        assert "hunter2" not in str(s.path)
        s._core.backend.pool.close()  # every connection gone: the next call fails
        with pytest.raises(StorageError) as e:
            s.remember("x", type="success", agent_id="a")
        assert "hunter2" not in str(e.value)


def _opener(db, out) -> None:
    try:
        with MemoryStore(db) as s:
            s.remember("opened at once", type="success", agent_id="a")
        out.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the test with it
        out.put(f"{type(exc).__name__}: {exc}")


def test_four_processes_create_a_new_database_at_once(db):
    """The first open migrates and records the embedder; hosts starting together queue on it."""
    out = CTX.Queue()
    procs = [CTX.Process(target=_opener, args=(db, out)) for _ in range(4)]
    for p in procs:
        p.start()
    got = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(60)
    assert got == ["ok"] * 4, got
    with MemoryStore(db) as s:
        assert s._core.backend.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 1


def test_postgres_similar_errors_share_fixes_when_asked(pg_url):
    """The fix links' excerpts are searched by their words on PostgreSQL too (``similar_errors``, the
    tsvector index of fix_links): an error never seen, worded like two taught ones, gets their fix
    when ``fix_similar_min`` allows it; an unrelated error gets none."""
    taught = [
        "ConnectionResetError: peer reset the replication stream of primary shard alpha",
        "ConnectionResetError: peer reset the replication stream of primary shard beta",
    ]
    asked = "ConnectionResetError: peer reset the replication stream of primary shard gamma while idle"
    with MemoryStore(pg_url, settings=Settings(fix_similar_min=0.6)) as s:
        for e in taught:
            s.learn_success("pg-agent", "restart the replica with --resync", error=e)
        task = {"id": "T-pg", "title": "replicate the shard", "agent_id": "pg-agent"}
        got = s.on_task_error(task, asked)
        assert [m.content for m in got.fixes] == ["restart the replica with --resync"]
        assert got.fix_evidence[0].level == "similar" and got.fix_evidence[0].similarity >= 0.6
        assert s.on_task_error(task, "PermissionError: [Errno 13] Permission denied: '/var/log/a.log'").fixes == []


def test_keyword_vocabulary_follows_every_write(pg_url):
    """PostgreSQL keeps document frequencies (recall's confidence IDFs) in the statement that
    writes the tsvector row: after inserts, keyed updates, merges with new tags, forgets and
    expiry they equal a recount."""
    with MemoryStore(pg_url) as s:
        a = s.remember("the proxy blocks pip installs", type="failure", agent_id="a", tags=["network"])
        s.remember("the proxy blocks pip installs", type="failure", agent_id="a", tags=["corporate"])  # merge
        s.remember("keyed note about docker images", type="decision", agent_id="a", key="k")
        s.remember("keyed note about kubernetes pods", type="decision", agent_id="a", key="k")  # update
        s.remember_many(
            [{"content": f"batch memory {i} about proxies", "type": "success", "agent_id": "b"} for i in range(20)]
        )
        s.remember("short lived", type="context", agent_id="a", ttl=1)
        s.forget(a.id)
        s._core.clock = lambda: 4e9  # far ahead: the ttl passed
        s.run_job("expire")
        b = s._core.backend
        recount = dict(
            b.execute("SELECT w, COUNT(*) FROM memories_fts, unnest(tsvector_to_array(doc)) AS w GROUP BY w").fetchall()
        )
        vocab = dict(b.execute("SELECT term, docs FROM memories_fts_vocab WHERE docs <> 0").fetchall())
        # the '' row: the documents' lengths (positions) summed, BM25's mean length (migration 0024)
        positions = "SELECT SUM(array_length(u.positions, 1)) FROM memories_fts, unnest(doc) AS u"
        assert vocab.pop("") == b.execute(positions).fetchone()[0] > 0
        assert vocab == recount
        _, df = b.term_frequencies(["proxies", "kubernetes", "docker"])
        assert df == {"proxies": 20, "kubernetes": 1, "docker": 0}
