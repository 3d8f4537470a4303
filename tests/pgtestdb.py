"""A real PostgreSQL (pgvector, pg_trgm) for the tests: one server per test session, started by
the ``pgserver`` wheel in a temporary folder (no system service), or the server at
``HARNESS_MEMORY_TEST_PG_URL`` when that is set. Each test gets a fresh schema (created and
dropped in milliseconds), named in the URL's ``search_path``."""

from __future__ import annotations

import os
import tempfile
import uuid
from urllib.parse import quote

_server = None
_base: str | None = None

# pgserver asks platformdirs for a runtime folder, which warns unless a private one is set
os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="hm-run-"))


def base_url() -> str:
    """The server's URL (started on first use in this process)."""
    global _server, _base
    if _base is not None:
        return _base
    url = os.environ.get("HARNESS_MEMORY_TEST_PG_URL")
    if not url:
        import pgserver

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


def with_schema(url: str, schema: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-c search_path={schema},public', safe='')}"


def new_schema() -> tuple[str, str]:
    """``(url, schema)`` of a fresh, empty schema."""
    import psycopg

    base = base_url()
    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(base, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {name}")
    return with_schema(base, name), name


def drop_schema(name: str) -> None:
    import psycopg

    with psycopg.connect(base_url(), autocommit=True) as c:
        c.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
