"""The storage seam: what every database engine implements, and how a target names one.

A target is a file path or ``sqlite:///path`` (the embedded SQLite backend,
:mod:`harness_memory.sqlite_backend`) or a ``postgresql://`` / ``postgres://`` URL (PostgreSQL with
pgvector, :mod:`harness_memory.postgres_backend`, imported only when such a URL is opened).
Anything else that looks like a URL is refused with :class:`InvalidInputError`, never taken for a
file name.

The rest of the package speaks one SQL dialect to every backend: plain tables, ``?`` parameters,
``INSERT ... ON CONFLICT``, ``RETURNING``; a backend adapts the parameter style. What differs
between engines (keyword search, vector search, scalar MIN/MAX, JSON fields, locking, the schema
steps) is a method of the backend, listed in :class:`Backend`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .errors import InvalidInputError

if TYPE_CHECKING:
    import numpy as np

    from .jobs.batches import Batcher

__all__ = ["Backend", "Target", "open_backend", "parse_target", "rarest_terms", "safe_url", "SIMILAR_POSTINGS"]

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


class Target:
    """A parsed database target: ``kind`` is ``"sqlite"`` (``path`` set) or ``"postgresql"`` (``url`` set)."""

    __slots__ = ("kind", "path", "url")

    def __init__(self, kind: str, path: Path | None = None, url: str | None = None):
        self.kind, self.path, self.url = kind, path, url

    def display(self) -> str:
        """What error messages and logs may show: the path, or the URL without its password."""
        return str(self.path) if self.path is not None else safe_url(self.url or "")

    def __str__(self) -> str:  # the full target, for handing to another process (scheduler)
        return str(self.path) if self.path is not None else (self.url or "")


SIMILAR_POSTINGS = 200  # index entries a search for similar linked errors reads (rarest_terms)


def rarest_terms(terms: Sequence[str], df: dict[str, int], size: int, budget: int) -> tuple[list[str], int]:
    """``(kept terms, lowest id)`` of a full-text search over ``size`` rows with a bounded cost: the rarest ``terms``
    (``df``: the rows holding each) while their summed counts fit ``budget``. A word every row holds (``line``,
    ``file``, an exception's name) would make an OR query rank every row. A term no row held when it was counted costs
    nothing and is always kept: the counts are cached, and a row holding it may have been written since. Only when
    no such term is left and even the rarest one is commoner than ``budget``, that one is kept and only about
    ``budget`` of the newest rows are read (ids above the lowest id)."""
    kept = [t for t in terms if df.get(t, 0) <= 0]
    total = 0
    for t in sorted((t for t in terms if df.get(t, 0) > 0), key=lambda t: (df[t], t)):
        if total + df[t] > budget and (total or kept):
            break
        kept.append(t)
        total += df[t]
    lowest = int(size - size * budget / total) if total > budget else 0
    return kept, lowest


def parse_target(value: Any, field: str = "db") -> Target:
    """A path, ``sqlite:///path``, or a ``postgresql://`` / ``postgres://`` URL."""
    from . import validation as v

    if isinstance(value, Target):
        return value
    if isinstance(value, str):
        if value.strip()[:5].lower() == "file:":
            # SQLite would read it as a URI (``file:x.db?mode=ro`` opens x.db, ``file:/a/b.db`` another file than
            # named): not a path, and not one of the URLs taken here
            raise InvalidInputError(f"{field}: a file: URI is not taken; pass the database's path (or sqlite:///path)")
        m = _URL.match(value.strip())
        if m:
            scheme = m.group(1).lower()
            raw = value.strip()
            if scheme in ("postgresql", "postgres"):
                if "\x00" in raw:
                    raise InvalidInputError(f"{field} must not contain NUL characters")
                return Target("postgresql", url="postgresql://" + raw[m.end() :])
            if scheme == "sqlite":
                rest = raw[m.end() :]
                if not rest.startswith("/") or rest == "/":
                    raise InvalidInputError(
                        f"{field}: a SQLite URL is sqlite:///relative/path or sqlite:////absolute/path"
                    )
                return Target("sqlite", path=v.path(rest[1:], field))
            raise InvalidInputError(
                f"{field}: unsupported database URL scheme {scheme!r}; use a file path, "
                "sqlite:///path or postgresql://user@host/dbname"
            )
    p = v.path(value, field)
    return Target("sqlite", path=p)


# a query parameter whose value may be a secret: a password (libpq's ``password``, ``sslpassword``), a key or token (an
# API's ``api-key``, ``access_token``), a signature or a session; over-masking a harmless one costs nothing
_SECRET_PARAM = re.compile(r"(?i)pass|secret|token|key|auth|sig|cred|session|code")
_USER = re.compile(r"[\w.%+~-]{1,128}")


def safe_url(url: str) -> str:
    """``url`` fit for a message or a log line: without its password and without the values of query parameters that
    may be secrets (``_SECRET_PARAM``), without its fragment. The user information is everything between ``://`` and
    the last ``@``, whatever it holds (a password with an unescaped ``/``, ``?`` or ``#`` ends the netloc for
    ``urllib`` and would have been printed); only a plain user name is kept of it."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        rest = url
    at = rest.rfind("@")
    user_part = ""
    if at >= 0:
        userinfo, rest = rest[:at], rest[at + 1 :]
        user = userinfo.partition(":")[0]
        user_part = "" if not user else (user if _USER.fullmatch(user) else "***") + "@"
    rest = rest.partition("#")[0]
    head, qsep, query = rest.partition("?")
    if qsep:
        params = []
        for item in query.split("&"):
            key, eq, _value = item.partition("=")
            params.append(f"{key}=***" if eq and _SECRET_PARAM.search(key) else item)
        head += "?" + "&".join(params)
    return (f"{scheme}://" if sep else "") + user_part + head


def open_backend(
    target: Target, *, busy_timeout_ms: int = 30_000, connect_timeout: float = 10.0, pool_size: int = 8
) -> Backend:
    """The backend for ``target`` (PostgreSQL's driver is imported only here, only for such a URL)."""
    if target.kind == "postgresql":
        from .postgres_backend import PostgresBackend

        return PostgresBackend(
            target.url or "", busy_timeout_ms=busy_timeout_ms, connect_timeout=connect_timeout, pool_size=pool_size
        )
    from .sqlite_backend import SQLiteBackend

    return SQLiteBackend(target.path or Path(os.devnull), busy_timeout_ms=busy_timeout_ms)


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """The object ``write()`` / ``read()`` yield: ``?`` parameters, the portable dialect."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor: ...
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any: ...


class Backend(Protocol):
    """Everything the package asks of a database engine (SQLite and PostgreSQL implement it)."""

    dialect: str  # "sqlite" | "postgresql"
    local_vector_index: bool  # may an in-process VectorIndex copy the vectors (never stale)?
    VEC_TABLE: str

    @property
    def lock(self) -> AbstractContextManager[Any, Any]: ...  # held around a recall and its bookkeeping (a no-op
    # where connections are per thread)
    @property
    def DatabaseError(self) -> type[Exception]: ...  # the driver's base error class

    def describe(self) -> str: ...  # the database for messages: a path or a password-free URL
    @property
    def conn(self) -> Connection: ...  # the current transaction's connection (statements outside one autocommit)
    @property
    def in_transaction(self) -> bool: ...
    def write(self) -> AbstractContextManager[Connection]: ...  # one write transaction, writers serialised
    def read(self) -> AbstractContextManager[Connection]: ...  # a consistent snapshot (joins an enclosing write)
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor: ...
    def close(self) -> None: ...
    def fork(self) -> Backend: ...  # a handle another thread may use while this one is in a transaction
    def check_writable(self) -> None: ...

    # schema
    def table_exists(self, name: str) -> bool: ...
    def migration_steps(self) -> list[tuple[str, str]]: ...
    def split_script(self, sql: str) -> list[str]: ...
    def before_migrations(self) -> None: ...

    # SQL that differs between engines, as fragments
    @staticmethod
    def unindexed(column: str) -> str: ...
    @staticmethod
    def greatest(a: str, b: str) -> str: ...
    @staticmethod
    def least(a: str, b: str) -> str: ...
    @staticmethod
    def json_text(column: str, key: str) -> str: ...

    # keyword search
    def index_text(self, memory_id: int, content: str, tags: Sequence[str], *, new: bool = False) -> None: ...
    def unindex_text(self, memory_ids: Sequence[int]) -> None: ...
    def keyword_search(
        self, text: str, where: str, params: Sequence[Any], limit: int, posting_budget: int | None = None
    ) -> list[tuple[int, float]]: ...
    def similar_errors(
        self, terms: Sequence[str], k: int, where: str = "1 = 1", params: Sequence[Any] = ()
    ) -> list[tuple[int, str]]: ...
    def similar_blocks(
        self, terms: Sequence[str], k: int, where: str = "1 = 1", params: Sequence[Any] = ()
    ) -> list[tuple[int, str]]: ...

    # vectors
    def create_vector_table(self, dimensions: int) -> None: ...
    def vector_dimensions(self) -> int | None: ...
    def put_vector(
        self,
        memory_id: int,
        namespace: str,
        agent_id: str,
        scope: str,
        memory_type: str,
        archived: bool,
        vector: np.ndarray,
        *,
        new: bool = False,
    ) -> None: ...
    def remove_vectors(self, memory_ids: Sequence[int]) -> None: ...
    def set_vectors_archived(self, memory_ids: Sequence[int], archived: bool) -> None: ...
    def get_vectors(self, memory_ids: Sequence[int]) -> dict[int, np.ndarray]: ...
    def iter_vectors(self, since_seq: int | None = None, batch: int = 5000) -> Iterator[tuple]: ...
    def vector_fill(self) -> tuple[int, int]: ...  # (live rows, slots) of the vector table
    def rebuild_vectors(
        self, batches: Batcher | None = None, progress: Callable[[int], None] | None = None
    ) -> int: ...  # free the vector table's dead space (same vectors) in batches; the rows moved
    def vector_change_seq(self) -> tuple[int, int]: ...
    def vector_knn(
        self,
        vector: np.ndarray,
        *,
        namespace: str,
        k: int,
        agent_id: str | None = None,
        scope: str | None = None,
        memory_type: str | None = None,
        include_archived: bool = False,
    ) -> list[tuple[int, float]]: ...
    def vector_search(
        self,
        vector: np.ndarray,
        *,
        namespace: str,
        k: int,
        agent_id: str | None,
        include_global: bool,
        types: Sequence[str] | None,
        include_archived: bool,
    ) -> list[tuple[int, float]]: ...

    # batches of new memories (writes.write_many): a loop on SQLite, one statement or pipeline per
    # batch on PostgreSQL
    def existing_hashes(self, keys: Sequence[tuple[str, str, str, str, str]]) -> dict[tuple, int]: ...
    def insert_returning(self, sql: str, rows: Sequence[Sequence[Any]]) -> list[int]: ...
    def index_texts(self, rows: Sequence[tuple[int, str, Sequence[str]]]) -> None: ...
    def put_vectors(self, rows: Sequence[tuple[int, str, str, str, str, bool, np.ndarray]]) -> None: ...
    def vector_knn_many(  # min_sim: rows below it may be left out (a batch's near-duplicate check)
        self, queries: Sequence[tuple[np.ndarray, str, str, str, str]], k: int, min_sim: float | None = None
    ) -> list[list[tuple[int, float]]]: ...

    # maintenance
    def optimize(
        self, vacuum: bool = False, batches: Batcher | None = None
    ) -> int: ...  # compact the keyword index and the file (1 if the file was rewritten)
    def sqlalchemy_engine(self) -> Any: ...  # a SQLAlchemy engine on the same database
