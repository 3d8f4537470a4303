"""Everything specific to PostgreSQL + pgvector: the connection pool, write transactions, the
``tsvector`` keyword index, the pgvector HNSW vector table and the schema steps.

Imported only when a ``postgresql://`` URL is opened (``pip install "harness-memory[postgres]"``).
The package speaks one dialect (``?`` parameters, ``ON CONFLICT``, ``RETURNING``); this module turns
``?`` into psycopg's ``%s`` (once per distinct statement) and implements the engine-specific
methods of :class:`harness_memory.backend.Backend`.

Concurrency: every connection comes from a ``psycopg_pool`` pool and belongs to one thread for
the length of a transaction. Every write transaction first takes one transaction-level advisory
lock per schema, so writers queue as SQLite's do (duplicate checks, keyed updates and the
ledger's read-modify-write stay correct across hosts); reads never wait for it. A lock wait
longer than ``busy_timeout_ms`` ends in :class:`DatabaseLockedError`.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from .backend import SIMILAR_POSTINGS, rarest_terms, safe_url
from .errors import (
    ConfigurationError,
    DatabaseLockedError,
    DatabaseOpenError,
    DatabaseReadOnlyError,
    InvalidInputError,
    SchemaError,
    StorageError,
    StoreClosedError,
)
from .sqlite_backend import query_terms

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.types.numeric import NumericLoader
    from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout
except ImportError as _exc:  # pragma: no cover - depends on the install
    raise ConfigurationError(
        f'PostgreSQL needs the driver: pip install "harness-memory[postgres]" ({_exc.name} is missing)'
    ) from None

__all__ = ["PostgresBackend"]

log = logging.getLogger(__name__)

DatabaseError = psycopg.Error

_TOKENS = re.compile(r"'(?:[^']|'')*'|\?|%")

BM25_K1, BM25_B = 1.2, 0.75  # the keyword channel's BM25, FTS5's constants (keyword_search)
# a document's length for BM25: its positions (over `unnest(doc) AS u`); the vocabulary's '' row sums them
_LENGTH = "COALESCE(SUM(array_length(u.positions, 1)), 0)"
PRE_RANK = 2  # the keyword channel ranks by BM25 the best PRE_RANK x limit matches by ts_rank x IDF
COPY_ROWS = 32  # a batch of at least this many rows goes through COPY instead of one statement per row
# A batch's near-duplicate check through the sign codes (PostgresBackend._near_by_codes) reads a group's codes
# when that costs less than the graph searches of the batch's queries in it, by measured costs (docs/backends.md,
# 22k-1M memories, load 3-9): reading a code CODE_READ_US, bounding a row for one query and comparing the rows
# the bound keeps CODE_ROW_QUERY_US (on latency.py's clustered memories), one graph search CODE_GRAPH_US: for Q
# queries a group of at most Q * CODE_GRAPH_US / (CODE_READ_US + Q * CODE_ROW_QUERY_US) rows (62 queries: about
# 19,000 rows; 2: about 6,700). A query whose bound leaves more than CODE_PAIRS rows goes to the graph instead;
# rows are bounded CODE_CHUNK at a time; CODE_SLACK covers float32 rounding in the bound's matrix product (the
# bound may keep a row it could drop, never the reverse)
CODE_READ_US = 1.0
CODE_ROW_QUERY_US = 0.25
CODE_GRAPH_US = 5000.0
CODE_PAIRS = 256
CODE_CHUNK = 8192
CODE_SLACK = 1e-3
# the tables whose multi-row INSERTs a COPY replaces: their values' Python types are the columns' (a COPY
# parses text, so a float sent to an integer column would fail where the INSERT's cast rounds it)
_COPY_TABLES = frozenset({"memories", "memory_tags", "vector_changes"})
# INSERT INTO t(cols) VALUES (...) [RETURNING id]: what COPY can replace (values: ?, numbers, NULL, 'plain')
_INSERT_VALUES = re.compile(
    r"\s*INSERT\s+INTO\s+(\w+)\s*\(([\w\s,]+)\)\s*VALUES\s*\(([^()]*)\)\s*(RETURNING\s+id)?\s*", re.I
)
_LITERAL = re.compile(r"-?\d+(?:\.\d+)?|NULL|'[^'\\]*'", re.I)
# the password of a URL's user information (scheme://user:password@host), wherever a message quotes it
_USERINFO_PASSWORD = re.compile(r"(://[^:@/\s\"]*):[^@\s\"]*@")
# -c name=value (or --name=value) in a URL's options: a setting the URL gives each session itself
_OPTION_NAMES = re.compile(r"(?:-c\s*|--)([A-Za-z_][\w.]*)\s*=")

# Each pooled session's settings, unless the URL's options set one (``options=-c hnsw.ef_search=400``):
SESSION_SETTINGS = {
    # filtered vector searches keep scanning the HNSW graph until k rows pass the filters
    "hnsw.iterative_scan": "relaxed_order",
    # candidates per HNSW search: overlap with an exact search against time (docs/backends.md)
    "hnsw.ef_search": "100",
    # the library's statements touch a few hundred rows each: starting parallel workers for one cost
    # more than it saved (a keyword search's parallel bitmap scan: 22 of its 25 ms in Gather Merge)
    "max_parallel_workers_per_gather": "0",
    # a store whose compact built an IVFFlat index instead (maintenance.vector_index = "ivfflat"): lists
    # searched per query (overlap@50 0.96 at 1,000 lists on latency.py's broad queries, docs/backends.md),
    # and a filtered search keeps probing lists until k rows pass the filters
    "ivfflat.probes": "40",
    "ivfflat.iterative_scan": "relaxed_order",
}
# lists an IVFFlat index's near-duplicate searches probe (a write's: writes.py's check and a batch's
# graph searches): a row at cosine >= 0.95 lies in the query's nearest lists; 40 per search would cost
# a batch of 1,000 memories about 40 s at 1M (set per write transaction, with its lock)
NEAR_PROBES = 4


def _to_format(sql: str) -> str:
    """``?`` parameters to psycopg's ``%s`` (and a literal ``%`` to ``%%``), string literals kept."""

    def sub(m: re.Match) -> str:
        t = m.group(0)
        if t == "?":
            return "%s"
        if t == "%":
            return "%%"
        return t.replace("%", "%%")

    return _TOKENS.sub(sub, sql)


class _Numeric(NumericLoader):
    """``numeric`` (SUM of bigints, AVG of ints, ROUND) as int when integral, else float (as SQLite)."""

    def load(self, data: Any) -> Any:
        d = super().load(data)
        if d.is_finite() and d == d.to_integral_value():
            return int(d)
        return float(d)


class _Result:
    """A fetched result: fetchone/fetchall/iteration/rowcount/description, independent of the connection."""

    __slots__ = ("_i", "description", "rowcount", "rows")

    def __init__(self, rows: list, rowcount: int, description: Any = None):
        self.rows, self.rowcount, self._i = rows, rowcount, 0
        # DB-API: a 7-item sequence per column (name first), None for a statement without rows
        self.description = None if description is None else [tuple(c) for c in description]

    def fetchone(self) -> Any:
        if self._i < len(self.rows):
            self._i += 1
            return self.rows[self._i - 1]
        return None

    def fetchall(self) -> list:
        out = self.rows[self._i :]
        self._i = len(self.rows)
        return out

    def __iter__(self) -> Iterator:
        while self._i < len(self.rows):
            self._i += 1
            yield self.rows[self._i - 1]


def _code_rows(queries: int) -> int:
    """The most rows a group may hold for its ``queries`` to be answered through the sign codes
    (see ``CODE_GRAPH_US``): beyond, their graph searches cost less."""
    return int(queries * CODE_GRAPH_US / (CODE_READ_US + queries * CODE_ROW_QUERY_US))


def _int_array(values: np.ndarray) -> str:
    """An integer array parameter as PostgreSQL's text form (``{1,2,3}``): psycopg dumps a long
    list of ints element by element (0.36 s for 46,000 pairs)."""
    return "{" + ",".join(map(str, values.tolist())) + "}"


def _np(v: Any) -> np.ndarray:
    """A loaded ``vector`` value (pgvector's ``Vector``, or an array) as float32."""
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32)


class _NoLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

    def acquire(self, *a: Any, **k: Any) -> bool:
        return True

    def release(self) -> None:
        return None


class _Conn:
    """A transaction's connection speaking the package dialect."""

    __slots__ = ("b", "pg")

    def __init__(self, backend: PostgresBackend, pg: Any):
        self.b, self.pg = backend, pg

    def execute(self, sql: str, params: Sequence[Any] | None = ()) -> _Result:
        with self.b._errors():
            cur = self.pg.execute(self.b._sql(sql), tuple(params)) if params else self.pg.execute(sql)
            rows = cur.fetchall() if cur.description is not None else []
            return _Result(rows, cur.rowcount, cur.description)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        rows = list(rows)
        if not rows:
            return
        plan = self.b._copy_plan(sql) if len(rows) >= COPY_ROWS else None
        with self.b._errors():
            if plan is not None and plan[3] is None:  # a plain INSERT ... VALUES: one COPY
                self.b._copy_rows(self.pg, plan, rows)
                return
            with self.pg.cursor() as cur:
                cur.executemany(self.b._sql(sql), rows)


class _AutoConn:
    """``backend.conn`` outside a transaction: each statement on a pooled connection, autocommit."""

    __slots__ = ("b",)

    def __init__(self, backend: PostgresBackend):
        self.b = backend

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Result:
        with self.b._connection() as c:
            return _Conn(self.b, c).execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.b.write() as c:
            c.executemany(sql, rows)


def _message(exc: BaseException, secret: str | None) -> str:
    """The driver's message, first line, with any password scrubbed."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if secret:
        msg = msg.replace(secret, "***")
    return msg


class PostgresBackend:
    """One PostgreSQL database (schema from the URL's ``search_path``), through a connection pool."""

    dialect = "postgresql"
    local_vector_index = False  # the HNSW index is shared by every host: an in-process copy could go stale
    VEC_TABLE = "memory_vectors"
    DatabaseError = psycopg.Error
    lock = _NoLock()

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_ms: int = 30_000,
        connect_timeout: float = 10.0,
        pool_size: int = 8,
        _pool: Any = None,
        _lock_key: int | None = None,
    ):
        from psycopg.conninfo import conninfo_to_dict

        self.url = url
        self.display = safe_url(url)
        self.path = self.display  # what messages name
        self.busy_timeout_ms = int(busy_timeout_ms)
        self.connect_timeout = max(1, round(connect_timeout))
        self._local = threading.local()
        self._sql_cache: dict[str, str] = {}
        self._copy_plans: dict[str, tuple[str, list[str], list[Any], str | None] | None] = {}
        self._vectors_seen = False
        self._stage_ok: bool | None = None  # may this role create the staging table (_can_stage)
        self._deferred: bool | None = None  # is the HNSW index partial (WHERE NOT pending): _can_defer
        self._codes: bool | None = None  # does the sign-code table exist (migration 0020): _has_codes
        try:
            info = conninfo_to_dict(url)
            password = info.get("password")
            self._secret = str(password) if password else None
            # the session settings the URL sets itself (options=-c name=value) are left to it
            self._url_settings = frozenset(m.lower() for m in _OPTION_NAMES.findall(str(info.get("options") or "")))
        except psycopg.ProgrammingError as exc:  # libpq's message quotes the URL, its password included
            msg = _USERINFO_PASSWORD.sub(r"\1:***@", _message(exc, None).replace(url, self.display))
            raise InvalidInputError(f"invalid PostgreSQL URL {self.display}: {msg}") from None
        self._owner = _pool is None
        if _pool is not None:
            self.pool, self._lock_key = _pool, _lock_key
            return
        kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": self.connect_timeout}
        try:  # one direct connection first: a clear error for bad credentials or an unreachable host
            probe = psycopg.connect(url, **kwargs)
        except psycopg.OperationalError as exc:
            raise self._open_error(exc) from None
        try:
            row = probe.execute("SELECT current_schema()").fetchone()
            schema = row[0] if row is not None else None
            if schema is None:
                raise SchemaError(f"{self.display}: no schema to create tables in (check search_path)")
            self._lock_key = zlib.crc32(f"harness-memory:{schema}".encode()) - 2**31
        finally:
            probe.close()
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, int(pool_size)),
            kwargs=kwargs,
            configure=self._configure,
            check=self._check,
            timeout=max(self.connect_timeout, self.busy_timeout_ms / 1000),
            reconnect_timeout=60,
            open=False,
            name="harness-memory",
        )
        try:
            self.pool.open(wait=True, timeout=self.connect_timeout)
        except PoolTimeout as exc:
            self.pool.close()
            raise DatabaseOpenError(f"cannot connect to {self.display} within {self.connect_timeout} s") from exc

    # -- connections ------------------------------------------------------------------------
    def _open_error(self, exc: BaseException) -> StorageError:
        msg = _message(exc, self._secret)
        low = msg.lower()
        if (
            "password authentication failed" in low
            or "authentication" in low
            or "role" in low
            and "does not exist" in low
        ):
            return DatabaseOpenError(f"cannot log in to {self.display}: {msg} (check the user and password)")
        if "database" in low and "does not exist" in low:
            return DatabaseOpenError(f"cannot open {self.display}: {msg} (create it with createdb)")
        return DatabaseOpenError(f"cannot reach {self.display}: {msg}")

    @staticmethod
    def _check(conn: Any) -> None:
        """Before a pooled connection is handed out: a round trip only when it may be dead. A
        connection the server closed (a restart, an idle timeout) has its socket readable while
        idle (the server's goodbye, or EOF); a healthy idle one has nothing to read. Checking
        every checkout with a query cost a round trip per statement group (6 per recall)."""
        import select

        if conn.closed or conn.broken:
            raise psycopg.OperationalError("the connection is closed")
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
        if readable:
            ConnectionPool.check_connection(conn)

    def _configure(self, conn: Any) -> None:
        conn.adapters.register_loader("numeric", _Numeric)
        for name, value in SESSION_SETTINGS.items():
            if name not in self._url_settings:  # options=-c name=value in the URL wins
                conn.execute(f"SET {name} = {value}")
        # busy_timeout_ms bounds every lock wait, as on SQLite: the writers' advisory lock, a row
        # another transaction holds, a table a migration or REINDEX holds (reads included)
        conn.execute(f"SET lock_timeout = {max(1, self.busy_timeout_ms)}")

    def _vector_ready(self, pg: Any) -> None:
        if pg.adapters.types.get("vector") is None:
            from pgvector.psycopg import register_vector

            register_vector(pg)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Driver errors as the library's typed errors (no password in any message)."""
        try:
            yield
        except pg_errors.LockNotAvailable as exc:
            raise DatabaseLockedError(
                f"{self.display} stayed locked by another connection for longer than busy_timeout_ms "
                f"({self.busy_timeout_ms} ms)"
            ) from exc
        except pg_errors.ReadOnlySqlTransaction as exc:
            raise DatabaseReadOnlyError(f"{self.display} is read-only: {_message(exc, self._secret)}") from exc
        except PoolClosed as exc:
            raise StoreClosedError(f"the store on {self.display} is closed: open a new MemoryStore to go on") from exc
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise StorageError(f"{self.display}: {_message(exc, self._secret)}") from exc

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        with self._errors(), self.pool.connection() as pg:
            yield pg

    def _sql(self, sql: str) -> str:
        got = self._sql_cache.get(sql)
        if got is None:
            got = _to_format(sql)
            if len(self._sql_cache) > 4096:
                self._sql_cache.clear()
            self._sql_cache[sql] = got
        return got

    @property
    def conn(self) -> _Conn | _AutoConn:
        cur = getattr(self._local, "conn", None)
        return cur if cur is not None else _AutoConn(self)

    @property
    def in_transaction(self) -> bool:
        return getattr(self._local, "conn", None) is not None

    def describe(self) -> str:
        return self.display

    @contextmanager
    def write(self) -> Iterator[_Conn]:
        """One write transaction; nested calls join it. Writers queue on one advisory lock."""
        st = self._local
        cur = getattr(st, "conn", None)
        if cur is not None:
            if not getattr(st, "writing", False):  # a write inside a read: take the write lock now
                cur.execute("SELECT pg_advisory_xact_lock(?)", (self._lock_key,))
                st.writing = True
            yield cur
            return
        with self._connection() as pg, self._errors(), pg.transaction():
            c = st.conn = _Conn(self, pg)
            st.writing = True
            try:
                # waits <= lock_timeout; an IVFFlat index's near-duplicate searches probe NEAR_PROBES lists
                pg.execute(
                    "SELECT pg_advisory_xact_lock(%s), set_config('ivfflat.probes', %s, true)",
                    (self._lock_key, str(NEAR_PROBES)),
                )
                yield c
            finally:
                st.conn = None
                st.writing = False

    @contextmanager
    def try_write(self) -> Iterator[_Conn | None]:
        """A write transaction if the write lock is free right now, else ``None`` (never waits);
        recall's access bookkeeping uses it so recalls never queue behind writers. Nested, it joins."""
        st = self._local
        if getattr(st, "conn", None) is not None:
            with self.write() as cur:
                yield cur
            return
        with self._connection() as pg, self._errors(), pg.transaction():
            row = pg.execute("SELECT pg_try_advisory_xact_lock(%s)", (self._lock_key,)).fetchone()
            if not row[0]:
                yield None
                return
            c = st.conn = _Conn(self, pg)
            st.writing = True
            try:
                yield c
            finally:
                st.conn = None
                st.writing = False

    @contextmanager
    def read(self) -> Iterator[_Conn]:
        """A consistent snapshot for several reads (joins an enclosing transaction)."""
        st = self._local
        cur = getattr(st, "conn", None)
        if cur is not None:
            yield cur
            return
        with self._connection() as pg, self._errors():
            # BEGIN ISOLATION LEVEL REPEATABLE READ: one round trip (a SET TRANSACTION after BEGIN was a second)
            pg.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            try:
                with pg.transaction():
                    c = st.conn = _Conn(self, pg)
                    st.terms = {}  # term_frequencies of this snapshot (keyword search and confidence ask alike)
                    try:
                        yield c
                    finally:
                        st.conn = None
                        st.terms = None
            finally:
                if pg.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                    pg.isolation_level = None  # writes and later reads of the pooled connection: the default

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Result:
        return self.conn.execute(sql, params)

    def close(self) -> None:
        if self._owner:
            self.pool.close()

    def fork(self) -> PostgresBackend:
        """A handle for another thread: the same pool and lock, its own transaction state."""
        return PostgresBackend(
            self.url, busy_timeout_ms=self.busy_timeout_ms, _pool=self.pool, _lock_key=self._lock_key
        )

    def check_writable(self) -> None:
        row = self.execute("SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only')").fetchone()
        if row[0] or row[1] == "on":
            raise DatabaseReadOnlyError(
                f"{self.display} is read-only (a standby, or default_transaction_read_only "
                "is on): connect to the primary"
            )

    # -- schema -------------------------------------------------------------------------------
    def table_exists(self, name: str) -> bool:
        return self.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()[0]

    def migration_steps(self) -> list[tuple[str, str]]:
        from .migrations import steps

        return steps("postgresql")

    @staticmethod
    def split_script(sql: str) -> list[str]:
        out, buf = [], []
        for line in sql.splitlines():
            stripped = line.strip()
            if stripped.startswith("--") or not stripped:
                continue
            buf.append(line)
            if stripped.endswith(";"):
                out.append("\n".join(buf).strip())
                buf = []
        if buf:
            out.append("\n".join(buf))
        return out

    def before_migrations(self) -> None:
        """Create the ``vector`` extension, or say exactly what to do when this role may not."""
        if self.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            return
        available = self.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if not available:
            raise ConfigurationError(
                f"{self.display}: the pgvector extension is not installed on the server; install it "
                "(https://github.com/pgvector/pgvector#installation, or the postgresql-NN-pgvector package), then "
                "run `harness-memory init --db URL` again"
            )
        try:
            with self.write() as c:  # hosts opening a new database at once queue here
                c.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except pg_errors.UniqueViolation:
            return  # another schema's first open created it meanwhile
        except (pg_errors.InsufficientPrivilege, StorageError) as exc:
            raise ConfigurationError(
                f"{self.display}: this role may not create the pgvector extension "
                f"({_message(exc, self._secret)}); ask a database owner or superuser to run "
                "`CREATE EXTENSION vector;` in this database once, then run `harness-memory init --db URL` again"
            ) from None

    # -- dialect fragments ----------------------------------------------------------------------
    @staticmethod
    def unindexed(column: str) -> str:
        return column

    @staticmethod
    def greatest(a: str, b: str) -> str:
        return f"GREATEST({a}, {b})"

    @staticmethod
    def least(a: str, b: str) -> str:
        return f"LEAST({a}, {b})"

    @staticmethod
    def json_text(column: str, key: str) -> str:
        return f"(({column})::jsonb ->> '{key}')"

    # -- keyword index (tsvector, english configuration, GIN) -----------------------------------
    _DOC = "setweight(to_tsvector('english', ?), 'A') || setweight(to_tsvector('english', ?), 'B')"

    def index_text(self, memory_id: int, content: str, tags: Sequence[str], *, new: bool = False) -> None:
        """The memory's tsvector row and, in the same statement, the document frequencies of its terms."""
        self.conn.execute(
            f"WITH d AS (SELECT {self._DOC} AS doc), "
            "old AS (SELECT doc FROM memories_fts WHERE memory_id = ?), "
            "up AS (INSERT INTO memories_fts(memory_id, doc) SELECT ?, doc FROM d "
            "ON CONFLICT (memory_id) DO UPDATE SET doc = excluded.doc), "
            "delta AS (SELECT w, SUM(c) AS c FROM (SELECT unnest(tsvector_to_array(doc)) AS w, 1 AS c FROM d "
            "UNION ALL SELECT unnest(tsvector_to_array(doc)), -1 FROM old) x GROUP BY w HAVING SUM(c) <> 0), "
            f"toks AS (SELECT (SELECT {_LENGTH} FROM d, unnest(d.doc) AS u) "
            f"- (SELECT {_LENGTH} FROM old, unnest(old.doc) AS u) AS n) "
            "INSERT INTO memories_fts_vocab(term, docs) SELECT w, c FROM delta "
            "UNION ALL SELECT '', n FROM toks WHERE n <> 0 "
            "ON CONFLICT (term) DO UPDATE SET docs = memories_fts_vocab.docs + excluded.docs",
            (content, " ".join(tags), memory_id, memory_id),
        )

    def unindex_text(self, memory_ids: Sequence[int]) -> None:
        if memory_ids:
            self.conn.execute(
                "WITH gone AS (DELETE FROM memories_fts WHERE memory_id = ANY(?) RETURNING doc), "
                "delta AS (SELECT w, COUNT(*) AS c FROM gone, unnest(tsvector_to_array(gone.doc)) AS w GROUP BY w "
                f"UNION ALL SELECT '', {_LENGTH} FROM gone, unnest(gone.doc) AS u) "
                "UPDATE memories_fts_vocab v SET docs = v.docs - delta.c FROM delta WHERE v.term = delta.w",
                (list(memory_ids),),
            )

    @staticmethod
    def _tsquery(terms: Sequence[str]) -> str:
        # query_terms() yields word characters only: nothing to escape in tsquery syntax
        return " | ".join(f"'{t}'" for t in terms)

    def keyword_search(
        self, text: str, where: str, params: Sequence[Any], limit: int, posting_budget: int | None = None
    ) -> list[tuple[int, float]]:
        """``(memory_id, score)`` pairs, best first: BM25 over the tsvector, as SQLite's FTS5 ranks
        (per query term its IDF from the vocabulary times its saturated, length-normalised frequency in
        the document, the content weighing twice the tags), so both engines rank alike (before
        2026-11-26 it was ``ts_rank`` times the IDF: LoCoMo R@5 1.7 points off SQLite's). BM25 orders
        the best ``PRE_RANK`` x ``limit`` matches by ``ts_rank`` times the IDF (it costs ~25 µs a row
        in SQL, ``ts_rank`` a fraction of that), so a match outside them is not ranked.

        ``posting_budget`` prunes as on SQLite: the rarest terms are kept while their summed
        document frequencies fit it (at least the rarest one); when even that one is common,
        only about ``posting_budget`` of the newest matching documents are ranked."""
        terms = query_terms(text)[:32]
        if not terms:
            return []
        size, df = self.term_frequencies(terms)
        terms = [t for t in terms if df[t] > 0]  # a word no document holds (or a stop word) cannot match
        if not terms:
            return []
        min_id = 0
        if posting_budget is not None and size > posting_budget:
            kept: list[str] = []
            total = 0
            for t in sorted(terms, key=lambda t: df[t]):
                if kept and total + df[t] > posting_budget:
                    break
                kept.append(t)
                total += df[t]
            terms = kept
            if total > posting_budget:
                min_id = int(size - size * posting_budget / total)
        idf = [max(1e-6, math.log((size - df[t] + 0.5) / (df[t] + 0.5))) for t in terms]
        # BM25 as SQLite's FTS5 computes it (k1 1.2, b 0.75; a term's frequency weighted 1 in the content
        # and 0.5 in the tags): per query term, the weights of its positions in the document; a document's
        # length is its number of positions (its words but the stop words), against their mean over the
        # store (the vocabulary's '' row holds their sum, kept in step by every write). With the number of
        # distinct terms as the length instead, LoCoMo's R@5 stayed 1.3 points off SQLite's (0.8 so).
        # BM25 in SQL reads every position of a document, ts_rank (C) only the query's terms: the matches
        # are first cut to PRE_RANK x limit by ts_rank x IDF, and BM25 ranks those
        pre = " + ".join(f"{w!r} * ts_rank('{{0.1, 0.2, 0.5, 1.0}}', f.doc, to_tsquery('english', ?), 1)" for w in idf)
        sql = (
            "WITH q AS (SELECT (tsvector_to_array(to_tsvector('english', x.w)))[1] AS lex, x.idf "
            "FROM unnest(?::text[], ?::float8[]) AS x(w, idf)), "
            "a AS (SELECT GREATEST(1.0, COALESCE((SELECT docs FROM memories_fts_vocab WHERE term = ''), 0)::float8 "
            "/ GREATEST(1, ?)) AS dl), "
            f"p AS (SELECT f.memory_id, f.doc FROM memories_fts f JOIN memories m ON m.id = f.memory_id "
            f"WHERE f.doc @@ to_tsquery('english', ?) AND f.memory_id > ? AND {where} "
            f"ORDER BY {pre} DESC, f.memory_id DESC LIMIT ?) "
            f"SELECT p.memory_id, SUM(t.idf * t.tf * {BM25_K1 + 1} / "
            f"(t.tf + {BM25_K1} * ({1 - BM25_B} + {BM25_B} * d.len / a.dl))) AS s "
            "FROM p CROSS JOIN a "
            f"CROSS JOIN LATERAL (SELECT {_LENGTH} AS len FROM unnest(p.doc) AS u) d "
            "CROSS JOIN LATERAL (SELECT q.idf, 0.5 * (cardinality(u.weights) + "
            "cardinality(array_positions(u.weights, 'A'::text))) AS tf "
            "FROM unnest(p.doc) AS u JOIN q ON q.lex = u.lexeme) t "
            "GROUP BY p.memory_id ORDER BY s DESC, p.memory_id DESC LIMIT ?"
        )
        rows = self.execute(
            sql,
            (
                list(terms),
                idf,
                size,
                self._tsquery(terms),
                min_id,
                *params,
                *(self._tsquery([t]) for t in terms),
                PRE_RANK * limit,
                limit,
            ),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def term_frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """``(documents, {term: documents containing it})`` for BM25-style IDFs (confidence.py), each
        term stemmed by the index's english configuration and looked up in ``memories_fts_vocab``."""
        # one statement, one snapshot: a term's count never exceeds the store size it is read with;
        # asked again in the same read snapshot (a recall's keyword search, then its confidence), the
        # same answer without the round trip
        cache = getattr(self._local, "terms", None)
        key = tuple(terms)
        if cache is not None and key in cache:
            size, df = cache[key]
            return size, dict(df)
        rows = self.execute(
            "SELECT (SELECT COALESCE(MAX(id), 0) FROM memories), t.w, COALESCE(v.docs, 0) "
            "FROM (SELECT 1) one LEFT JOIN unnest(?::text[]) AS t(w) ON TRUE LEFT JOIN memories_fts_vocab v "
            "ON v.term = (tsvector_to_array(to_tsvector('english', t.w)))[1]",
            (list(terms),),
        ).fetchall()
        out = int(rows[0][0]), {r[1]: int(r[2]) for r in rows if r[1] is not None}
        if cache is not None:
            cache[key] = (out[0], dict(out[1]))
        return out

    def similar_errors(
        self, terms: Sequence[str], k: int, where: str = "1 = 1", params: Sequence[Any] = ()
    ) -> list[tuple[int, str]]:
        """``(link id, excerpt)`` of the ``k`` linked errors whose excerpts match ``terms`` best (the rarest terms
        only, see ``_similar``), among the links whose memory ``m`` passes ``where``."""
        return self._similar("error_message", "excerpt_tsv", terms, k, where, params)

    def similar_blocks(
        self, terms: Sequence[str], k: int, where: str = "1 = 1", params: Sequence[Any] = ()
    ) -> list[tuple[int, str]]:
        """``(link id, failure block)`` of the ``k`` linked errors whose failure blocks match ``terms`` best, among the
        links whose memory ``m`` passes ``where``."""
        return self._similar("error_instance", "instance_tsv", terms, k, where, params)

    def _similar(
        self, column: str, tsv: str, terms: Sequence[str], k: int, where: str, params: Sequence[Any]
    ) -> list[tuple[int, str]]:
        """The ``k`` best ``ts_rank`` matches of ``terms`` in a fix-links tsvector, its cost bounded
        (``backend.rarest_terms``: in more than ``SIMILAR_POSTINGS`` links, the rarest terms, or the newest links;
        ranking every link that holds a common word took 0.4-0.6 s at 20,000 links). A term's count is read through
        the GIN index (one statement for the terms not yet counted) and cached while the links are within 10 % of the
        number they were counted at."""
        if not terms:
            return []
        terms = list(terms)
        lowest = 0
        size = int(self.execute("SELECT COALESCE(MAX(id), 0) FROM fix_links").fetchone()[0])
        if size > SIMILAR_POSTINGS:
            cache: dict[tuple[str, str], tuple[int, int]] = self.__dict__.setdefault("_similar_df", {})
            counts: dict[str, int] = {}
            for t in terms:  # (read once: another thread may clear the cache meanwhile)
                hit = cache.get((tsv, t))
                if hit is not None and 0.9 * hit[1] <= size <= 1.1 * hit[1]:
                    counts[t] = hit[0]
            stale = [t for t in terms if t not in counts]
            if stale:
                if len(cache) > 200_000:
                    cache.clear()
                for w, n in self.execute(
                    f"SELECT t.w, (SELECT COUNT(*) FROM fix_links f WHERE f.{tsv} @@ to_tsquery('english', "
                    "quote_literal(t.w))) FROM unnest(?::text[]) AS t(w)",
                    (stale,),
                ).fetchall():
                    counts[w] = int(n)
                    cache[tsv, w] = (int(n), size)
            terms, lowest = rarest_terms(terms, counts, size, SIMILAR_POSTINGS)
            if not terms:
                return []
        # visibility inside the search: links the asker may not see never crowd out the k it may
        return [
            (int(r[0]), r[1])
            for r in self.execute(
                f"SELECT l.id, l.{column} FROM (SELECT to_tsquery('english', ?) AS q) q, fix_links l "
                f"JOIN memories m ON m.id = l.memory_id WHERE l.{column} IS NOT NULL AND l.{tsv} @@ q.q AND l.id > ? "
                f"AND {where} ORDER BY ts_rank(l.{tsv}, q.q) DESC, l.id LIMIT ?",
                (self._tsquery(terms), lowest, *params, k),
            )
        ]

    # -- vectors (pgvector, HNSW, cosine) ---------------------------------------------------------
    # The graph holds the rows that are not pending: a batch's vectors are written pending (no graph
    # insert: 3-9 ms a row, half a batch's time), searched exactly beside the graph through the
    # pending index, and moved into the graph by compact or by a batch that finds more than
    # BACKLOG_ROWS waiting (docs/backends.md, "The vector backlog").
    _HNSW = "CREATE INDEX ix_{t}_hnsw ON {t} USING hnsw (embedding vector_cosine_ops){with_} WHERE NOT pending"
    _PENDING_INDEX = (
        "CREATE INDEX IF NOT EXISTS ix_{t}_pending ON {t}(namespace, agent_id, scope, memory_type) WHERE pending"
    )
    BACKLOG_ROWS = 2048  # pending rows at most after a batch: every vector search reads them exactly (~0.7 µs each)
    # The sign codes of the vectors (migration 0020): one row per vector, kept in step by statement
    # triggers on the vector table (whatever writes it: a batch, a remember, a delete, a re-embedding),
    # read by a batch's near-duplicate check (:meth:`_near_by_codes`). The code is pgvector's
    # binary_quantize (bit i set where coordinate i > 0) packed most significant bit first, as
    # numpy's packbits packs it.
    _CODES = (
        "CREATE OR REPLACE FUNCTION hm_vector_codes() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN "
        "IF TG_OP = 'DELETE' THEN DELETE FROM memory_vector_codes c USING hm_old o WHERE c.memory_id = o.memory_id; "
        "ELSIF TG_OP = 'INSERT' THEN INSERT INTO memory_vector_codes(memory_id, namespace, agent_id, scope, "
        "memory_type, code) SELECT n.memory_id, n.namespace, n.agent_id, n.scope, n.memory_type, "
        "substr(varbit_send(binary_quantize(n.embedding)), 5) FROM hm_new n ON CONFLICT (memory_id) DO UPDATE SET "
        "namespace = excluded.namespace, agent_id = excluded.agent_id, scope = excluded.scope, "
        "memory_type = excluded.memory_type, code = excluded.code; "
        "ELSE INSERT INTO memory_vector_codes(memory_id, namespace, agent_id, scope, memory_type, code) "
        "SELECT n.memory_id, n.namespace, n.agent_id, n.scope, n.memory_type, "
        "substr(varbit_send(binary_quantize(n.embedding)), 5) FROM hm_new n JOIN hm_old o ON o.memory_id = n.memory_id "
        "WHERE n.embedding <> o.embedding OR n.namespace <> o.namespace OR n.agent_id <> o.agent_id "
        "OR n.scope <> o.scope OR n.memory_type <> o.memory_type ON CONFLICT (memory_id) DO UPDATE SET "
        "namespace = excluded.namespace, agent_id = excluded.agent_id, scope = excluded.scope, "
        "memory_type = excluded.memory_type, code = excluded.code; "
        "END IF; RETURN NULL; END $f$",
        "CREATE TABLE memory_vector_codes (memory_id BIGINT PRIMARY KEY, namespace TEXT NOT NULL, "
        "agent_id TEXT NOT NULL, scope TEXT NOT NULL, memory_type TEXT NOT NULL, code BYTEA NOT NULL)",
        "CREATE INDEX ix_memory_vector_codes_group ON memory_vector_codes(namespace, agent_id, scope, memory_type) "
        "INCLUDE (memory_id, code)",
        "CREATE TRIGGER hm_codes_insert AFTER INSERT ON memory_vectors REFERENCING NEW TABLE AS hm_new "
        "FOR EACH STATEMENT EXECUTE FUNCTION hm_vector_codes()",
        "CREATE TRIGGER hm_codes_update AFTER UPDATE ON memory_vectors REFERENCING OLD TABLE AS hm_old "
        "NEW TABLE AS hm_new FOR EACH STATEMENT EXECUTE FUNCTION hm_vector_codes()",
        "CREATE TRIGGER hm_codes_delete AFTER DELETE ON memory_vectors REFERENCING OLD TABLE AS hm_old "
        "FOR EACH STATEMENT EXECUTE FUNCTION hm_vector_codes()",
    )

    def create_vector_table(self, dimensions: int) -> None:
        c = self.conn
        d = int(dimensions)
        c.execute(f"DROP TABLE IF EXISTS {self.VEC_TABLE}")
        c.execute(
            f"CREATE TABLE {self.VEC_TABLE} (memory_id BIGINT PRIMARY KEY, namespace TEXT NOT NULL, "
            "agent_id TEXT NOT NULL, scope TEXT NOT NULL, memory_type TEXT NOT NULL, "
            f"archived INTEGER NOT NULL, embedding vector({d}) NOT NULL, pending BOOLEAN NOT NULL DEFAULT FALSE)"
        )
        if d <= 2000:  # HNSW indexes vectors of up to 2,000 dimensions; beyond, searches are exact
            c.execute(self._HNSW.format(t=self.VEC_TABLE, with_=""))
        c.execute(f"CREATE INDEX ix_{self.VEC_TABLE}_agent ON {self.VEC_TABLE}(namespace, agent_id, memory_type)")
        c.execute(f"CREATE INDEX ix_{self.VEC_TABLE}_scope ON {self.VEC_TABLE}(namespace, scope, memory_type)")
        c.execute(self._PENDING_INDEX.format(t=self.VEC_TABLE))
        c.execute("DROP TABLE IF EXISTS memory_vector_codes")
        for sql in self._CODES:
            c.execute(sql)
        self._deferred = self._codes = None

    def vector_dimensions(self) -> int | None:
        row = self.execute(
            "SELECT a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass(?) AND a.attname = 'embedding'",
            (self.VEC_TABLE,),
        ).fetchone()
        return int(row[0]) if row else None

    def _vec(self, vector: np.ndarray) -> Any:
        from pgvector import Vector

        return Vector(np.ascontiguousarray(vector, dtype=np.float32))

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
    ) -> None:
        c = self.conn
        assert isinstance(c, _Conn)  # called inside write(): a transaction's connection
        self._vector_ready(c.pg)
        # one round trip: the row and its change-log entry
        c.execute(
            f"WITH v AS (INSERT INTO {self.VEC_TABLE}(memory_id, namespace, agent_id, scope, memory_type, "
            "archived, embedding) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id) DO UPDATE SET "
            "namespace = excluded.namespace, agent_id = excluded.agent_id, scope = excluded.scope, "
            "memory_type = excluded.memory_type, archived = excluded.archived, embedding = excluded.embedding "
            "RETURNING memory_id) INSERT INTO vector_changes(memory_id, op) SELECT memory_id, 'put' FROM v",
            (memory_id, namespace, agent_id, scope, memory_type, int(archived), self._vec(vector)),
        )

    def _has_vectors(self) -> bool:
        """Whether the vector table exists (remembered once seen: it is only ever replaced, never dropped)."""
        if not self._vectors_seen:
            self._vectors_seen = self.table_exists(self.VEC_TABLE)
        return self._vectors_seen

    def remove_vectors(self, memory_ids: Sequence[int]) -> None:
        if not memory_ids or not self._has_vectors():
            return
        ids = list(memory_ids)
        self.conn.execute(f"DELETE FROM {self.VEC_TABLE} WHERE memory_id = ANY(?)", (ids,))
        self.conn.executemany("INSERT INTO vector_changes(memory_id, op) VALUES (?, 'del')", [(i,) for i in ids])

    def set_vectors_archived(self, memory_ids: Sequence[int], archived: bool) -> None:
        if not memory_ids:
            return
        ids = list(memory_ids)
        self.conn.execute(f"UPDATE {self.VEC_TABLE} SET archived = ? WHERE memory_id = ANY(?)", (int(archived), ids))
        self.conn.executemany("INSERT INTO vector_changes(memory_id, op) VALUES (?, 'put')", [(i,) for i in ids])

    def _vector_rows(self, sql: str, params: Sequence[Any]) -> list:
        """Rows of a statement on vectors, in binary (parsing 384 floats of text per row cost more
        than the query)."""

        def run(pg: Any) -> list:
            self._vector_ready(pg)
            with self._errors(), pg.cursor(binary=True) as cur:
                cur.execute(self._sql(sql), tuple(params))
                return cur.fetchall()

        st = self._local
        if getattr(st, "conn", None) is not None:
            return run(st.conn.pg)
        with self._connection() as pg:
            return run(pg)

    def get_vectors(self, memory_ids: Sequence[int]) -> dict[int, np.ndarray]:
        if not memory_ids:
            return {}
        rows = self._vector_rows(
            f"SELECT memory_id, embedding FROM {self.VEC_TABLE} WHERE memory_id = ANY(?)", (list(memory_ids),)
        )
        return {int(r[0]): _np(r[1]) for r in rows}

    def iter_vectors(self, since_seq: int | None = None, batch: int = 5000) -> Iterator[tuple]:
        cols = "memory_id, namespace, agent_id, scope, memory_type, archived, embedding"
        if since_seq is None:
            last = -1
            while True:
                rows = self._vector_rows(
                    f"SELECT {cols} FROM {self.VEC_TABLE} WHERE memory_id > ? ORDER BY memory_id LIMIT ?", (last, batch)
                )
                for r in rows:
                    yield (*r[:6], _np(r[6]))
                if len(rows) < batch:
                    return
                last = rows[-1][0]
        ids = [r[0] for r in self.execute("SELECT DISTINCT memory_id FROM vector_changes WHERE seq > ?", (since_seq,))]
        got = (
            {
                r[0]: r
                for r in self._vector_rows(f"SELECT {cols} FROM {self.VEC_TABLE} WHERE memory_id = ANY(?)", (ids,))
            }
            if ids
            else {}
        )
        for i in ids:
            r = got.get(i)
            yield (i, None, None, None, None, None, None) if r is None else (*r[:6], _np(r[6]))

    def vector_similarities(self, vector: np.ndarray, memory_ids: Sequence[int]) -> dict[int, float]:
        """Cosine of ``vector`` with each stored vector of ``memory_ids``, computed by the server
        (shipping the vectors back cost more than the search)."""
        if not memory_ids or not self._has_vectors():
            return {}
        rows = self._vector_rows(
            f"SELECT memory_id, 1 - (embedding <=> ?) FROM {self.VEC_TABLE} WHERE memory_id = ANY(?)",
            (self._vec(vector), list(memory_ids)),
        )
        return {int(r[0]): float(r[1]) for r in rows}

    def vector_change_seq(self) -> tuple[int, int]:
        lo, hi = self.execute("SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0) FROM vector_changes").fetchone()
        return int(lo), int(hi)

    def _search_sql(self, where: str, q: str = "?", v: str = "") -> str:
        """The nearest ``k`` rows passing ``where``: the HNSW graph's (rows not pending) merged with
        the backlog's, searched exactly (``+ 0``: never through an HNSW index, which holds no pending
        row). Parameters: ``q`` (when ``?``), the where's, ``q``, k, ``q``, the where's, k, k; ``v``
        prefixes the columns (a ``LATERAL`` search names the table ``v``)."""
        t = self.VEC_TABLE
        return (
            f"SELECT memory_id, d FROM ((SELECT {v}memory_id, {v}embedding <=> {q} AS d FROM {t} {v[:-1]} "
            f"WHERE NOT {v}pending AND {where} ORDER BY {v}embedding <=> {q} LIMIT ?) UNION ALL "
            f"(SELECT {v}memory_id, ({v}embedding <=> {q}) + 0 AS d FROM {t} {v[:-1]} WHERE {v}pending AND {where} "
            "ORDER BY d LIMIT ?)) x ORDER BY d, memory_id LIMIT ?"
        )

    def _can_defer(self, pg: Any) -> bool:
        """Whether this store's HNSW index is partial (``WHERE NOT pending``: created from migration
        0018 on, or rebuilt by compact since), so that a batch may leave its vectors out of the graph."""
        if self._deferred is None:  # the IVFFlat index compact may build instead is partial as well
            with self._errors():
                row = pg.execute(
                    "SELECT bool_or(i.indpred IS NOT NULL) FROM pg_index i "
                    "WHERE i.indexrelid IN (to_regclass(%s), to_regclass(%s))",
                    (f"ix_{self.VEC_TABLE}_hnsw", f"ix_{self.VEC_TABLE}_ivfflat"),
                ).fetchone()
            self._deferred = bool(row and row[0])
        return self._deferred

    def backlog(self) -> int:
        """Vectors waiting outside the HNSW graph (searched exactly until compact moves them in)."""
        if not self._has_vectors():
            return 0
        return int(self.execute(f"SELECT COUNT(*) FROM {self.VEC_TABLE} WHERE pending").fetchone()[0])

    def _index_backlog(self, c: _Conn, rows: int) -> int:
        """Move the oldest ``rows`` pending vectors into the HNSW graph (an update: the new row
        versions are the graph's inserts); how many moved."""
        with self._errors():
            cur = c.pg.execute(
                f"UPDATE {self.VEC_TABLE} SET pending = FALSE WHERE memory_id IN (SELECT memory_id FROM "
                f"{self.VEC_TABLE} WHERE pending ORDER BY memory_id LIMIT %s)",
                (int(rows),),
            )
        return max(0, cur.rowcount)

    def _knn(self, vector: np.ndarray, conds: list[str], params: list[Any], k: int) -> list[tuple[int, float]]:
        """Nearest rows passing ``conds``, the filters inside the HNSW scan (iterative scan); when
        the index gives fewer than ``k`` (a filter too selective for the scan budget), the exact
        search over the filtered rows decides."""
        if not self._has_vectors():
            return []
        where = " AND ".join(conds)
        q = self._vec(vector)
        rows = self._vector_rows(self._search_sql(where), (q, *params, q, int(k), q, *params, int(k), int(k)))
        if len(rows) < k:
            exact = (
                f"SELECT memory_id, (embedding <=> ?) + 0 AS d FROM {self.VEC_TABLE} WHERE {where} "
                "ORDER BY d, memory_id LIMIT ?"
            )
            rows = self._vector_rows(exact, (q, *params, int(k)))
        return [(int(r[0]), 1.0 - float(r[1])) for r in rows]

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
    ) -> list[tuple[int, float]]:
        conds, params = ["namespace = ?"], [namespace]
        for col, val in (("agent_id", agent_id), ("scope", scope), ("memory_type", memory_type)):
            if val is not None:
                conds.append(f"{col} = ?")
                params.append(val)
        if not include_archived:
            conds.append("archived = 0")
        return self._knn(vector, conds, params, k)

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
    ) -> list[tuple[int, float]]:
        """One search with "own or global" and the types inside it."""
        conds = ["namespace = ?"]
        params: list[Any] = [namespace]
        if agent_id is None:
            conds.append("scope = 'global'")
        elif include_global:
            conds.append("(agent_id = ? OR scope = 'global')")
            params.append(agent_id)
        else:
            conds.append("agent_id = ?")
            params.append(agent_id)
        if types:
            conds.append("memory_type = ANY(?)")
            params.append(list(types))
        if not include_archived:
            conds.append("archived = 0")
        return self._knn(vector, conds, params, k)

    # -- batches (writes.write_many): one statement per table per batch, not per memory ----------
    def _copy_plan(self, sql: str) -> tuple[str, list[str], list[Any], str | None] | None:
        """``(table, columns, values, returning)`` of an ``INSERT INTO t(cols) VALUES (…)`` whose
        values are ``?`` or plain literals (a value is the parameter's index, or the literal as
        text), else ``None``: what a COPY of the same rows can replace. Cached per statement."""
        cache = self._copy_plans
        if sql in cache:
            return cache[sql]
        plan = None
        m = _INSERT_VALUES.fullmatch(sql)
        if m is not None:
            cols = [c.strip() for c in m.group(2).split(",")]
            vals: list[Any] = []
            n = 0
            for tok in (t.strip() for t in m.group(3).split(",")):
                if tok == "?":
                    vals.append(n)
                    n += 1
                elif _LITERAL.fullmatch(tok):
                    vals.append(None if tok.upper() == "NULL" else tok.strip("'"))
                else:
                    vals = []
                    break
            if vals and len(vals) == len(cols) and m.group(1).lower() in _COPY_TABLES:
                plan = (m.group(1), cols, vals, m.group(4))
        if len(cache) > 256:
            cache.clear()
        cache[sql] = plan
        return plan

    @staticmethod
    def _copy_rows(pg: Any, plan: tuple[str, list[str], list[Any], str | None], rows: Sequence[Sequence[Any]]) -> None:
        """The rows of an ``INSERT … VALUES`` statement (see :meth:`_copy_plan`) by one COPY (text
        format: the server converts each value by its column's type, as the INSERT would)."""
        table, cols, vals, _ = plan
        with pg.cursor().copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
            for r in rows:
                cp.write_row([r[v] if isinstance(v, int) else v for v in vals])

    _STAGE = (
        "CREATE TEMP TABLE IF NOT EXISTS hm_stage_vectors (o BIGINT NOT NULL, namespace TEXT, agent_id TEXT, "
        "scope TEXT, memory_type TEXT, archived INTEGER, embedding vector) ON COMMIT DELETE ROWS"
    )

    def _can_stage(self, pg: Any) -> bool:
        """Whether this role may create the staging table (the ``TEMPORARY`` privilege on the
        database, which PostgreSQL grants to every role unless revoked); asked once per store.
        Without it, batches take the pipelined statements."""
        if self._stage_ok is None:
            with self._errors():
                row = pg.execute("SELECT has_database_privilege(current_database(), 'TEMPORARY')").fetchone()
            self._stage_ok = bool(row and row[0])
        return self._stage_ok

    def _stage_vectors(self, c: _Conn, rows: Sequence[tuple[int, str, str, str, str, int, np.ndarray]]) -> None:
        """A batch's vectors into this session's temporary table ``hm_stage_vectors`` (emptied at
        commit) by one binary COPY: sending them as parameters (an array of vectors, or a statement
        per row) cost 0.5 ms per vector; the COPY costs about 0.03 ms."""
        self._vector_ready(c.pg)
        c.pg.execute(self._STAGE)
        c.pg.execute("DELETE FROM hm_stage_vectors")
        with c.pg.cursor().copy("COPY hm_stage_vectors FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["int8", "text", "text", "text", "text", "int4", "vector"])
            for r in rows:
                cp.write_row((r[0], r[1], r[2], r[3], r[4], r[5], np.ascontiguousarray(r[6], dtype=np.float32)))

    def _tx(self) -> _Conn:
        c = self.conn
        assert isinstance(c, _Conn)  # called inside write(): a transaction's connection
        return c

    def existing_hashes(self, keys: Sequence[tuple[str, str, str, str, str]]) -> dict[tuple, int]:
        """The oldest un-keyed, non-thread memory per ``(namespace, agent, scope, type, content hash)``."""
        if not keys:
            return {}
        cols = list(zip(*keys))
        rows = (
            self._tx()
            .execute(
                "SELECT q.ns, q.ag, q.sc, q.ty, q.h, x.id FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], "
                "?::text[]) AS q(ns, ag, sc, ty, h) CROSS JOIN LATERAL (SELECT m.id FROM memories m WHERE "
                "m.namespace = q.ns AND m.agent_id = q.ag AND m.scope = q.sc AND m.memory_type = q.ty AND "
                "m.content_hash = q.h AND m.key IS NULL AND m.thread_id IS NULL ORDER BY m.id LIMIT 1) x",
                [list(c) for c in cols],
            )
            .fetchall()
        )
        return {tuple(r[:5]): int(r[5]) for r in rows}

    def insert_returning(self, sql: str, rows: Sequence[Sequence[Any]]) -> list[int]:
        """Run an ``INSERT … RETURNING id`` once per row, pipelined (one round trip); the ids in order."""
        if not rows:
            return []
        c = self._tx()
        plan = self._copy_plan(sql) if len(rows) >= COPY_ROWS else None
        if plan is not None and plan[3] is not None and "id" not in plan[1]:
            # one COPY with ids drawn from the table's sequence first (in order, as the INSERTs would
            # have drawn them: writers hold the write lock), instead of one INSERT per row
            table, cols, vals, _ = plan
            with self._errors():
                ids = sorted(
                    int(r[0])
                    for r in c.pg.execute(
                        "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                        (table, len(rows)),
                    )
                )
                self._copy_rows(
                    c.pg,
                    (table, ["id", *cols], [0, *(v + 1 if isinstance(v, int) else v for v in vals)], None),
                    [(i, *r) for i, r in zip(ids, rows)],
                )
            return ids
        out: list[int] = []
        with self._errors(), c.pg.cursor() as cur:
            cur.executemany(self._sql(sql), [tuple(r) for r in rows], returning=True)
            while True:
                row = cur.fetchone()
                assert row is not None  # every statement returns its id
                out.append(int(row[0]))
                if not cur.nextset():
                    break
        return out

    def index_texts(self, rows: Sequence[tuple[int, str, Sequence[str]]]) -> None:
        """The tsvector rows of new memories and their vocabulary counts, one statement."""
        if not rows:
            return
        self._tx().execute(
            "WITH d AS (SELECT x.id, setweight(to_tsvector('english', x.content), 'A') || "
            "setweight(to_tsvector('english', x.tags), 'B') AS doc "
            "FROM unnest(?::bigint[], ?::text[], ?::text[]) AS x(id, content, tags)), "
            "up AS (INSERT INTO memories_fts(memory_id, doc) SELECT id, doc FROM d), "
            "delta AS (SELECT w, COUNT(*) AS c FROM d, unnest(tsvector_to_array(d.doc)) AS w GROUP BY w "
            f"UNION ALL SELECT '', {_LENGTH} FROM d, unnest(d.doc) AS u) "
            "INSERT INTO memories_fts_vocab(term, docs) SELECT w, c FROM delta ORDER BY w "
            "ON CONFLICT (term) DO UPDATE SET docs = memories_fts_vocab.docs + excluded.docs",
            ([r[0] for r in rows], [r[1] for r in rows], [" ".join(r[2]) for r in rows]),
        )

    _PUT = (
        "WITH v AS (INSERT INTO {t}(memory_id, namespace, agent_id, scope, memory_type, "
        "archived, embedding) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id) DO UPDATE SET "
        "namespace = excluded.namespace, agent_id = excluded.agent_id, scope = excluded.scope, "
        "memory_type = excluded.memory_type, archived = excluded.archived, embedding = excluded.embedding "
        "RETURNING memory_id) INSERT INTO vector_changes(memory_id, op) SELECT memory_id, 'put' FROM v"
    )

    def put_vectors(self, rows: Sequence[tuple[int, str, str, str, str, bool, np.ndarray]]) -> None:
        """Vectors of new memories with their change-log entries, pipelined."""
        if not rows:
            return
        c = self._tx()
        self._vector_ready(c.pg)
        if len(rows) < COPY_ROWS or not self._can_stage(c.pg):
            c.executemany(
                self._PUT.format(t=self.VEC_TABLE),
                [(r[0], r[1], r[2], r[3], r[4], int(r[5]), self._vec(r[6])) for r in rows],
            )
            return
        self._stage_vectors(c, [(r[0], r[1], r[2], r[3], r[4], int(r[5]), r[6]) for r in rows])
        defer = self._can_defer(c.pg)
        with self._errors():
            c.pg.execute(
                f"WITH v AS (INSERT INTO {self.VEC_TABLE}(memory_id, namespace, agent_id, scope, memory_type, "
                "archived, embedding, pending) SELECT o, namespace, agent_id, scope, memory_type, archived, "
                "embedding, %s FROM hm_stage_vectors ORDER BY o ON CONFLICT (memory_id) DO UPDATE SET "
                "namespace = excluded.namespace, agent_id = excluded.agent_id, scope = excluded.scope, "
                "memory_type = excluded.memory_type, archived = excluded.archived, embedding = excluded.embedding, "
                "pending = excluded.pending RETURNING memory_id) INSERT INTO vector_changes(memory_id, op) "
                "SELECT memory_id, 'put' FROM v ORDER BY memory_id",
                (defer,),
            )
            if defer:  # the backlog stays bounded: past BACKLOG_ROWS the batch moves the oldest into the graph
                waiting = c.pg.execute(f"SELECT COUNT(*) FROM {self.VEC_TABLE} WHERE pending").fetchone()
                excess = int(waiting[0]) - self.BACKLOG_ROWS if waiting else 0
                if excess > 0:
                    self._index_backlog(c, excess)

    def vector_knn_many(
        self, queries: Sequence[tuple[np.ndarray, str, str, str, str]], k: int, min_sim: float | None = None
    ) -> list[list[tuple[int, float]]]:
        """:meth:`vector_knn` (archived rows included) for each ``(vector, namespace, agent, scope,
        type)``, the searches sent as one pipeline. With ``min_sim`` (a batch's near-duplicate
        check) rows below it may be left out; a staged batch then answers exactly through the sign
        codes (:meth:`_near_by_codes`) where its groups are small enough, the graph elsewhere."""
        if not queries or not self._has_vectors():
            return [[] for _ in queries]
        c = self._tx()
        self._vector_ready(c.pg)
        exact: set[int] = set()  # queries answered exactly (fewer than k rows is then the answer)
        if len(queries) >= COPY_ROWS and self._can_stage(c.pg):  # staged by COPY, every search in one statement
            self._stage_vectors(c, [(i, q[1], q[2], q[3], q[4], 0, q[0]) for i, q in enumerate(queries)])
            out: list[list[tuple[int, float]]] = [[] for _ in queries]
            if min_sim is not None and self._has_codes(c.pg):
                for i, hits in self._near_by_codes(c, queries, k, float(min_sim)).items():
                    out[i] = hits
                    exact.add(i)
            rest = [i for i in range(len(queries)) if i not in exact]
            if rest:
                with self._errors():
                    group = (
                        "v.namespace = q.namespace AND v.agent_id = q.agent_id AND v.scope = q.scope "
                        "AND v.memory_type = q.memory_type"
                    )
                    search = self._search_sql(group, "q.embedding", "v.").replace("?", "%s")
                    rows = c.pg.execute(
                        f"SELECT q.o, x.memory_id, x.d FROM hm_stage_vectors q CROSS JOIN LATERAL ({search}) x "
                        "WHERE q.o = ANY(%s) ORDER BY q.o, x.d, x.memory_id",
                        (int(k), int(k), int(k), rest),
                    ).fetchall()
                for o, mid, d in rows:
                    out[o].append((int(mid), 1.0 - float(d)))
        else:
            sql = self._sql(self._search_sql("namespace = ? AND agent_id = ? AND scope = ? AND memory_type = ?"))
            with self._errors():
                with c.pg.pipeline():
                    curs = []
                    for vec, ns, agent, scope, mtype in queries:
                        q = self._vec(vec)
                        keys = (ns, agent, scope, mtype)
                        curs.append(c.pg.execute(sql, (q, *keys, q, int(k), q, *keys, int(k), int(k))))
                out = [[(int(r[0]), 1.0 - float(r[1])) for r in cur.fetchall()] for cur in curs]
        for i, (vec, ns, agent, scope, mtype) in enumerate(queries):
            if len(out[i]) < k and i not in exact:  # a filter too selective for the scan budget: exact search
                out[i] = self.vector_knn(
                    vec, namespace=ns, agent_id=agent, scope=scope, memory_type=mtype, include_archived=True, k=k
                )
        return out

    def _has_codes(self, pg: Any) -> bool:
        """Whether the sign-code table exists (created with the vector table, or by migration 0020)."""
        if not self._codes:
            with self._errors():
                row = pg.execute("SELECT to_regclass('memory_vector_codes') IS NOT NULL").fetchone()
            self._codes = bool(row and row[0])
        return self._codes

    def _near_by_codes(
        self, c: _Conn, queries: Sequence[tuple[np.ndarray, str, str, str, str]], k: int, min_sim: float
    ) -> dict[int, list[tuple[int, float]]]:
        """The rows of each query's group (namespace, agent, scope, type; archived and pending rows
        included) whose cosine with it reaches ``min_sim``, best first, at most ``k``: exact, for the
        queries this answers (the others are left to the graph).

        One statement reads the sign codes of the batch's groups (48 bytes a row at 384 dimensions,
        through the covering index), of a group small enough that this costs less than its queries'
        graph searches (:func:`_code_rows`). The codes bound the cosine from above (as ``VectorIndex.near`` on SQLite): where a row's
        sign bit differs from the query's at coordinate i, ``|q_i - v_i| >= |q_i|``, so for unit
        vectors the query's weight ``q_i**2`` summed over the differing coordinates is at most
        ``|q - v|**2 = 2 - 2 cos``; that sum, for every row and query of a group at once, is one
        matrix product of the rows' bits with the queries' signed weights. A row over
        ``2 (1 - min_sim)`` cannot reach ``min_sim``; the cosines of the rows left are computed by
        the server in a second statement (the same ``<=>`` as the graph's search). A query with more
        than ``CODE_PAIRS`` such rows is left to the graph."""
        groups: dict[tuple[str, str, str, str], list[int]] = {}
        for i, query in enumerate(queries):
            groups.setdefault((query[1], query[2], query[3], query[4]), []).append(i)
        keys = list(groups)
        limits = [_code_rows(len(groups[g])) for g in keys]
        with self._errors(), c.pg.cursor(binary=True) as cur:
            cur.execute(
                "SELECT g.o, a.n, CASE WHEN a.n <= g.lim THEN a.ids END, CASE WHEN a.n <= g.lim THEN a.codes END "
                "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::int8[]) "
                "WITH ORDINALITY AS g(ns, ag, sc, ty, lim, o) CROSS JOIN LATERAL (SELECT COUNT(*) AS n, "
                "string_agg(int8send(x.memory_id), ''::bytea) AS ids, string_agg(x.code, ''::bytea) AS codes FROM "
                "(SELECT m.memory_id, m.code FROM memory_vector_codes m WHERE m.namespace = g.ns AND m.agent_id = g.ag "
                "AND m.scope = g.sc AND m.memory_type = g.ty LIMIT g.lim + 1) x) a",  # a group too large: not sent
                ([g[0] for g in keys], [g[1] for g in keys], [g[2] for g in keys], [g[3] for g in keys], limits),
            )
            fetched = cur.fetchall()
        bound = 2.0 * (1.0 - min_sim) + CODE_SLACK
        out: dict[int, list[tuple[int, float]]] = {}
        pairs_q: list[np.ndarray] = []  # (query, row) pairs whose cosine the server computes
        pairs_m: list[np.ndarray] = []
        for o, n, ids_b, codes_b in fetched:
            members = groups[keys[int(o) - 1]]
            if int(n) > limits[int(o) - 1]:
                continue  # too large for this batch: the graph answers its queries
            if int(n) == 0:  # an empty group: no near duplicate
                out.update((i, []) for i in members)
                continue
            ids = np.frombuffer(ids_b, dtype=">i8").astype(np.int64)
            raw = np.stack([np.asarray(queries[i][0], dtype=np.float64) for i in members])
            norms = np.linalg.norm(raw, axis=1)
            live = norms > 0  # a zero vector has no cosine: nothing is its near duplicate
            q = raw / np.where(live, norms, 1.0)[:, None]
            dim = q.shape[1]
            codes = np.frombuffer(codes_b, dtype=np.uint8).reshape(len(ids), -1)
            w = q * q
            signed = (w * np.where(q > 0, -1.0, 1.0)).astype(np.float32).T  # (dim, queries)
            base = np.where(q > 0, w, 0.0).sum(axis=1)  # the weight of the query's set bits
            found_j, found_m = [], []
            for s in range(0, len(ids), CODE_CHUNK):
                bits = np.unpackbits(codes[s : s + CODE_CHUNK], axis=1, count=dim).astype(np.float32)
                weight = bits @ signed + base  # (rows, queries): the query's weight where the signs differ
                r, j = np.nonzero(weight <= bound)
                found_j.append(j)
                found_m.append(ids[s + r])
            jj, mm = np.concatenate(found_j), np.concatenate(found_m)
            ok = live & (np.bincount(jj, minlength=len(members)) <= CODE_PAIRS)  # else the graph answers
            for answered in np.flatnonzero(ok).tolist():
                out[members[answered]] = []
            keep = ok[jj]
            pairs_q.append(np.asarray(members, dtype=np.int64)[jj[keep]])
            pairs_m.append(mm[keep])
        pq = np.concatenate(pairs_q) if pairs_q else np.zeros(0, np.int64)
        pm = np.concatenate(pairs_m) if pairs_m else np.zeros(0, np.int64)
        log.debug(
            "near duplicates by codes: %d of %d queries answered, %d rows compared", len(out), len(queries), len(pq)
        )
        if len(pq):
            with self._errors():
                rows = c.pg.execute(  # the stored vector in a subquery: a join carried 1.5 kB rows into a sort
                    f"SELECT o, mid, sim FROM (SELECT p.o, p.mid, 1 - ((SELECT v.embedding FROM {self.VEC_TABLE} v "
                    "WHERE v.memory_id = p.mid) <=> s.embedding) AS sim FROM unnest(%s::int8[], %s::int8[]) "
                    "AS p(o, mid) JOIN hm_stage_vectors s ON s.o = p.o) x WHERE sim >= %s",
                    (_int_array(pq), _int_array(pm), float(min_sim)),  # as text: a list of ints dumped slowly
                ).fetchall()
            for o, mid, sim in rows:
                out[int(o)].append((int(mid), float(sim)))
            for i in {int(r[0]) for r in rows}:
                out[i] = sorted(out[i], key=lambda h: (-h[1], h[0]))[:k]
        return out

    # -- maintenance (the compact job) ------------------------------------------------------------
    def vector_fill(self) -> tuple[int, int]:
        """PostgreSQL reuses the space of deleted rows (VACUUM): slots are the live rows."""
        if not self.table_exists(self.VEC_TABLE):
            return 0, 0
        n = self.execute(f"SELECT COUNT(*) FROM {self.VEC_TABLE}").fetchone()[0]
        return n, n

    def rebuild_vectors(self, batches: Any = None, progress: Any = None) -> int:
        """Rebuild the HNSW index (after many deletes its graph holds dead ends); ``batches`` and
        ``progress`` serve SQLite's batched rebuild, one statement here. A graph of every row (built
        before migration 0018) is rebuilt partial, ``WHERE NOT pending``, with its options (``m``,
        ``ef_construction``) kept: from then on batches may leave their vectors in the backlog."""
        t = self.VEC_TABLE
        with self.write() as c:
            row = c.execute(
                "SELECT i.indpred IS NOT NULL, x.reloptions FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid "
                "WHERE i.indexrelid = to_regclass(?)",
                (f"ix_{t}_hnsw",),
            ).fetchone()
            if row is not None and not row[0]:
                options = f" WITH ({', '.join(row[1])})" if row[1] else ""
                c.execute(f"DROP INDEX ix_{t}_hnsw")
                c.execute(self._HNSW.format(t=t, with_=options))
                c.execute(self._PENDING_INDEX.format(t=t))
                self._deferred = None
            else:
                c.execute(f"REINDEX TABLE {t}")
            return c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]

    # -- which vector index (maintenance.vector_index; compact converges the store to it) -----------
    IVF_MIN_ROWS = 100_000  # below, HNSW is kept: lists trained on few rows, and HNSW's overlap is high there
    IVF_GROWTH = 2.0  # an IVFFlat index is retrained (rebuilt) once the rows are this factor of those it learned

    @staticmethod
    def ivf_lists(rows: int) -> int:
        """Lists of an IVFFlat index over ``rows`` vectors: the square root (pgvector's advice above
        1M rows; 1,000 at 1M, as rows / 1,000 gives there), so the rows it was trained on are about
        its lists squared."""
        return max(1, math.isqrt(max(0, int(rows)) - 1) + 1)

    @staticmethod
    def ivf_build_kb(lists: int, dimensions: int) -> int:
        """``maintenance_work_mem`` (kB) an IVFFlat build of ``lists`` lists needs: pgvector's k-means
        refuses to start without room for its sample (50 rows a list), a bound per sample and list, the
        lists' centers and distances (it asked for 277 MB at 1,007 lists and 384 dimensions); a fourth
        more, and 64 MB besides."""
        n, d = int(lists), int(dimensions)
        return (50 * n * (4 * d + 8) + 208 * n * n + 16 * n * d) * 5 // 4 // (1 << 10) + 65536

    def vector_index(self) -> tuple[str | None, int]:
        """``(kind, lists)`` of the vector table's index: ``("hnsw", 0)``, ``("ivfflat", lists)``, or
        ``(None, 0)`` (no vector table, or vectors above HNSW's 2,000 dimensions)."""
        if not self._has_vectors():
            return None, 0
        t = self.VEC_TABLE
        row = self.execute(
            "SELECT a.amname, x.reloptions FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid "
            "JOIN pg_am a ON a.oid = x.relam WHERE i.indexrelid IN (to_regclass(?), to_regclass(?)) AND i.indisvalid "
            "ORDER BY x.relname LIMIT 1",
            (f"ix_{t}_hnsw", f"ix_{t}_ivfflat"),
        ).fetchone()
        if row is None:
            return None, 0
        lists = next((int(o.split("=", 1)[1]) for o in row[1] or () if o.startswith("lists=")), 100)
        return str(row[0]), lists if row[0] == "ivfflat" else 0

    def converge_vector_index(self, want: str | None) -> dict[str, Any]:
        """Make the vector index the one ``maintenance.vector_index`` asks for (compact calls this
        under its lease): ``ivfflat`` once the store holds ``IVF_MIN_ROWS`` vectors, retrained when
        the rows grew ``IVF_GROWTH``-fold since (lists squared); ``hnsw`` back; ``None`` keeps what
        the store has. The new index is built ``CONCURRENTLY`` (writes and searches go on; minutes
        at 1M rows), then swapped for the old one in a short write transaction. What it did:
        ``{"vector_index": kind, "ivf_lists": n, "index_built": 0 or 1}``."""
        have, lists = self.vector_index()
        out: dict[str, Any] = {"vector_index": have, "ivf_lists": lists, "index_built": 0}
        if have is None or want is None:
            return out
        if want not in ("hnsw", "ivfflat"):
            raise InvalidInputError(f"maintenance.vector_index must be 'hnsw' or 'ivfflat', not {want!r}")
        rows = int(self.execute(f"SELECT COUNT(*) FROM {self.VEC_TABLE}").fetchone()[0])
        if want == "ivfflat":
            if rows < self.IVF_MIN_ROWS or (have == "ivfflat" and rows < self.IVF_GROWTH * lists * lists):
                return out
            lists = self.ivf_lists(rows)
            method = f"ivfflat (embedding vector_cosine_ops) WITH (lists = {lists})"
        elif have == "hnsw":
            return out
        else:
            lists, method = 0, "hnsw (embedding vector_cosine_ops)"
        self._build_vector_index(method, want, lists)
        return {"vector_index": want, "ivf_lists": lists, "index_built": 1}

    def _build_vector_index(self, method: str, kind: str, lists: int) -> None:
        t = self.VEC_TABLE
        new = f"ix_{t}_{kind}_new"
        with self._connection() as pg, self._errors():  # autocommit: CONCURRENTLY runs outside a transaction
            pg.execute(f"DROP INDEX IF EXISTS {new}")  # an invalid leftover of a build that failed
            # raised, never lowered: an HNSW build wants the server's own, set above the graph's size
            need = self.ivf_build_kb(lists, self.vector_dimensions() or 0)
            have = int(
                pg.execute("SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'").fetchone()[0]
            )
            pg.execute(f"SET maintenance_work_mem = '{max(need, have)}kB'")
            try:
                pg.execute(f"CREATE INDEX CONCURRENTLY {new} ON {t} USING {method} WHERE NOT pending")
            except psycopg.Error as exc:
                try:  # an invalid index would cost every write; the next build drops it if this cannot
                    pg.execute(f"DROP INDEX IF EXISTS {new}")
                except psycopg.Error as drop:
                    log.warning("%s: the failed build's index %s stays until the next: %s", self.display, new, drop)
                if isinstance(exc, pg_errors.LockNotAvailable | psycopg.OperationalError):
                    raise  # DatabaseLockedError / StorageError (_errors)
                raise StorageError(
                    f"{self.display}: building the {kind} index failed: {_message(exc, self._secret)}"
                ) from exc
            finally:
                pg.execute("RESET maintenance_work_mem")
        with self.write() as c:  # the swap: short, under the write lock
            c.execute(f"DROP INDEX IF EXISTS ix_{t}_hnsw")
            c.execute(f"DROP INDEX IF EXISTS ix_{t}_ivfflat")
            c.execute(f"ALTER INDEX {new} RENAME TO ix_{t}_{kind}")
            c.execute(self._PENDING_INDEX.format(t=t))
        self._deferred = None
        log.info("%s: vector index rebuilt as %s", self.display, method)

    def index_backlog(self, batches: Any = None) -> int:
        """Move the vectors waiting outside the HNSW graph into it, in short write transactions
        (``batches``: the jobs' batcher, sized to its time budget; else 256 rows each), as many as
        were waiting at the start (batches written meanwhile do not keep it going); how many moved."""
        if not self._has_vectors():
            return 0
        budget, moved = self.backlog(), 0
        while moved < budget:
            with batches.transaction(self) if batches is not None else self.write() as c:
                n = self._index_backlog(c, min(budget - moved, batches.size if batches is not None else 256))
            if n == 0:
                break
            moved += n
        return moved

    def optimize(self, vacuum: bool = False, batches: Any = None) -> int:
        """The vector backlog into the HNSW graph (:meth:`index_backlog`), then ANALYZE; autovacuum
        reclaims space on PostgreSQL (never vacuums here: 0)."""
        moved = self.index_backlog(batches)
        if moved:
            log.info("%s: %d vectors moved from the backlog into the HNSW graph", self.display, moved)
        self.execute("ANALYZE")
        return 0

    # -- other ----------------------------------------------------------------------------------
    def sqlalchemy_engine(self):
        from sqlalchemy import create_engine

        return create_engine("postgresql+psycopg://" + self.url.split("://", 1)[1])
