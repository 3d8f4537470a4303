"""A real PostgreSQL (pgvector, pg_trgm) for the tests: one server per test session, started by
the ``pgserver`` wheel in a temporary folder (no system service), or the server at
``HARNESS_MEMORY_TEST_PG_URL`` when that is set. Each test gets a fresh schema (created and
dropped in milliseconds), named in the URL's ``search_path``."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from urllib.parse import quote

_server = None
_base: str | None = None
_runtime: str | None = None  # the runtime folder this process made for its server, removed at its exit
_owner = 0  # the process that started the server


def _remove_folders() -> None:
    """At the exit of the process that started the server: remove the runtime folder made for it (it was made at
    import before, in every test process, and never removed: 1,279 of them had gathered in /tmp here). The server's
    data folder is pgserver's to stop and delete (``cleanup_mode="delete"``). Some runs leave it half-deleted, whether
    this handler also stops and deletes it or not (seen once each way, not understood)."""
    if os.getpid() != _owner:
        return  # (a forked child: the folders are its parent's)
    if _runtime is not None:
        shutil.rmtree(_runtime, ignore_errors=True)


def base_url() -> str:
    """The server's URL (started on first use in this process)."""
    global _server, _base, _owner, _runtime
    if _base is not None:
        return _base
    url = os.environ.get("HARNESS_MEMORY_TEST_PG_URL")
    if not url:
        # pgserver asks platformdirs for a runtime folder, which warns unless a private one is set
        if not os.environ.get("XDG_RUNTIME_DIR"):
            _runtime = tempfile.mkdtemp(prefix="hm-run-")
            os.environ["XDG_RUNTIME_DIR"] = _runtime
        import pgserver

        _owner = os.getpid()
        atexit.register(_remove_folders)
        _server = pgserver.get_server(tempfile.mkdtemp(prefix="hm-pg-"), cleanup_mode="delete")
        url = _server.get_uri()
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    _base = url
    return url


def server():
    """The pgserver handle (None when HARNESS_MEMORY_TEST_PG_URL is used)."""
    base_url()
    return _server


def with_schema(url: str, schema: str, **session: str) -> str:
    """``url`` with ``schema`` first on its search path, and any other session settings given."""
    sep = "&" if "?" in url else "?"
    opts = " ".join(f"-c {k}={v}" for k, v in {"search_path": f"{schema},public", **session}.items())
    return f"{url}{sep}options={quote(opts, safe='')}"


_admin = None  # this process's connection for creating, emptying and dropping schemas
_admin_pid = 0


def admin():
    """A connection (autocommit) of this process for the fixtures' own statements: a new backend
    costs the server ~40 ms of CPU, so it is opened once per process (again after a fork, or when
    the server was restarted under it)."""
    global _admin, _admin_pid
    if _admin is None or _admin_pid != os.getpid() or _admin.closed or _admin.broken:
        import psycopg

        _admin, _admin_pid = psycopg.connect(base_url(), autocommit=True), os.getpid()
        _admin.execute("SET lock_timeout = '10s'")  # a lock a test left behind: an error, not a hang
    return _admin


def _admin_execute(sql: str, params=None):
    import psycopg

    try:
        return admin().execute(sql, params)
    except psycopg.OperationalError:  # the server restarted since (a test of reconnects): once more
        return admin().execute(sql, params)


def new_schema() -> tuple[str, str]:
    """``(url, schema)`` of a fresh, empty schema."""
    name = "t_" + uuid.uuid4().hex[:16]
    _admin_execute(f"CREATE SCHEMA {name}")
    return with_schema(base_url(), name), name


def drop_schema(name: str) -> None:
    _admin_execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


# --- migrated schemas used again ---------------------------------------------------------------
# Migrating a fresh schema costs the server ~0.5 s (26 tables, their indexes, triggers and
# functions). A test that only asks for ``store`` sees a migrated database with no rows, so the
# schema it leaves is emptied and handed to the next such test of this process instead of being
# dropped -- but only when its catalog is exactly what a fresh migration makes (same tables,
# columns, indexes, constraints, triggers, functions, views and applied steps): a test that
# altered its schema gets it dropped, as before. A test that names ``db`` itself always gets a
# fresh, empty schema (it may test what opening a new database does).

_FINGERPRINT = """
SELECT md5(string_agg(replace(x, '{s}', '~'), E'\\n' ORDER BY x)) FROM (
  SELECT 'c ' || c.relname || ' ' || c.relkind::text FROM pg_class c WHERE c.relnamespace = '{s}'::regnamespace
  UNION ALL
  SELECT 'a ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
         || ' ' || a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  WHERE c.relnamespace = '{s}'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT 'i ' || pg_get_indexdef(i.indexrelid) FROM pg_index i
  JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = '{s}'::regnamespace
  UNION ALL
  SELECT 'k ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
  WHERE connamespace = '{s}'::regnamespace
  UNION ALL
  SELECT 't ' || t.tgname || ' ' || t.tgenabled::text || ' ' || t.tgfoid::regproc::text FROM pg_trigger t
  JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = '{s}'::regnamespace AND NOT t.tgisinternal
  UNION ALL
  SELECT 'p ' || proname || ' ' || prosrc FROM pg_proc WHERE pronamespace = '{s}'::regnamespace
  UNION ALL
  SELECT 'v ' || viewname || ' ' || definition FROM pg_views WHERE schemaname = '{s}'
) parts(x)
"""

# per kind of store (its settings and clock): the fingerprint of a schema a store of that kind
# has just migrated from empty, with its ``embedder_info`` row, and the emptied schemas to hand out
_heads: dict[str, tuple[str, tuple]] = {}
_spare: dict[str, list[str]] = {}
_KEPT = ("schema_migrations", "embedder_info")  # what a store's first open leaves: kept as it was


def _fingerprint(c, name: str) -> tuple[str, tuple]:
    assert name.isidentifier(), name  # a name new_schema() made: safe to spell into the statement
    shape = c.execute(_FINGERPRINT.format(s=name)).fetchone()[0]
    steps = c.execute(f"SELECT string_agg(name, ',' ORDER BY version) FROM {name}.schema_migrations").fetchone()[0]
    rows = tuple(tuple(r) for r in c.execute(f"SELECT * FROM {name}.embedder_info ORDER BY id").fetchall())
    return f"{shape}:{steps}", rows


def migrated_or_new(kind: str) -> tuple[str, str]:
    """``(url, schema)``: an emptied schema a store of this kind opened before, when this process
    has one, else a fresh, empty schema (the test's store migrates it)."""
    spare = _spare.get(kind)
    name = spare.pop() if spare else new_schema()[1]
    return with_schema(base_url(), name), name


def note_head(kind: str, name: str) -> None:
    """Record what a store of this kind made of an empty schema (once per kind and process)."""
    if kind not in _heads:
        _heads[kind] = _fingerprint(admin(), name)


def release(kind: str, name: str) -> None:
    """Empty a schema for the next test of this kind when its catalog and ``embedder_info`` are
    what the kind's first open made of an empty one; else drop it."""
    import psycopg

    head, c = _heads.get(kind), admin()
    try:
        same = head is not None and _fingerprint(c, name) == head
        if same:
            tables = [
                r[0]
                for r in c.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (name,))
                if r[0] not in _KEPT
            ]
            seqs = c.execute(
                "SELECT oid::regclass::text FROM pg_class WHERE relkind = 'S' AND relnamespace = %s::regnamespace",
                (name,),
            ).fetchall()
            with c.transaction():  # every sequence of the schema back to its start, owned by a column or not
                c.execute("TRUNCATE " + ", ".join(f"{name}.{t}" for t in tables))
                for (seq,) in seqs:
                    c.execute(f"ALTER SEQUENCE {seq} RESTART")
    except psycopg.Error:  # e.g. a lock a test left behind: the schema is dropped instead
        same = False
    if same:
        _spare.setdefault(kind, []).append(name)
    else:
        drop_schema(name)
