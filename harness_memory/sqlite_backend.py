"""Everything specific to SQLite lives here: the connection factory, pragmas, write
transactions, the FTS5 keyword index and the sqlite-vec (vec0) vector table.

The rest of the package talks to :class:`SQLiteBackend` through the methods below; a
PostgreSQL + pgvector backend implements the same methods (see docs/architecture.md).

Never ``import sqlite3``: CPython's build here cannot load extensions. ``sqlean`` can.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlean

from .backend import SIMILAR_POSTINGS, rarest_terms
from .errors import DatabaseLockedError, DatabaseReadOnlyError, SchemaError, StoreClosedError

if TYPE_CHECKING:
    import numpy as np

    from .jobs.batches import Batcher as BatchSizer

__all__ = ["connect", "SQLiteBackend", "DatabaseError", "query_terms", "match_expression"]

DatabaseError = sqlean.DatabaseError
OperationalError = sqlean.OperationalError
MOVE_BATCH = 500  # vec0 rows moved per transaction when no batch sizer is given
VEC0_MAX_K = 4096  # the largest k sqlite-vec 0.1.9 accepts in a KNN query
# when vec0 is what recall searches (Settings.vector_search), a bulk delete leaving more orphaned
# vec0 rows than this purges them at once instead of leaving them to the weekly compact job: past
# VEC0_MAX_K a KNN cannot step over them and every search would take the exact path
VEC0_PURGE_AT = VEC0_MAX_K // 2


def _vec0_path() -> str:
    """sqlite-vec's loadable extension, found without importing the ``sqlite_vec`` package (its
    ``__init__`` imports numpy and sqlite3: a third of a second of a command's start-up)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise SchemaError("the sqlite-vec package is not installed (pip install sqlite-vec)")
    return str(Path(spec.origin).parent / "vec0")


def connect(path: str | Path, *, busy_timeout_ms: int = 30_000) -> sqlean.Connection:
    """Open a connection: sqlean driver, sqlite-vec loaded, WAL, busy timeout, foreign keys.

    The connection is in autocommit mode; writes go through :meth:`SQLiteBackend.write`,
    which issues ``BEGIN IMMEDIATE``.
    """
    path = Path(path)
    name = str(path)
    if name != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.lower().startswith("file:"):
            name = f".{os.sep}{name}"  # a file named so, never read as an SQLite URI (``file:x.db?vfs=...``)
    conn = sqlean.connect(name, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000)
    conn.enable_load_extension(True)
    try:
        conn.load_extension(_vec0_path())
    finally:
        conn.enable_load_extension(False)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA foreign_keys = ON")
    # Switching a new file to WAL needs an exclusive lock and can fail at once with "locked"
    # while other processes open the same new file: retry within the busy timeout.
    deadline = time.monotonic() + max(busy_timeout_ms / 1000, 1.0)
    mode = ""
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                conn.close()
                raise
            time.sleep(0.01)
    if str(path) != ":memory:" and mode.lower() != "wal":
        raise SchemaError(f"could not switch {path} to WAL mode (got {mode!r})")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA temp_store = MEMORY")
    return conn


# Words that carry no retrieval signal. Kept short on purpose: FTS5's porter stemmer does
# the rest. Removing them keeps BM25 from scanning huge posting lists of "the", "was"...
_STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves""".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# INSERT INTO t(cols) VALUES (...) RETURNING id: rows that insert_returning may give their ids itself
_INSERT_RETURNING_ID = re.compile(
    r"\s*INSERT\s+INTO\s+(\w+)\s*\(([\w\s,]+)\)\s*VALUES\s*\(([^()]*)\)\s*RETURNING\s+id\s*", re.I
)


def query_terms(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` without stop words, in first-seen order."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.lower()):
        if w not in _STOP_WORDS and w not in seen:
            seen[w] = None
    return list(seen)


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH expression: the terms OR-ed, each quoted (no syntax injection)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def float32_bytes(vector: Any) -> bytes:
    """A query vector as sqlite-vec's float32 blob, without importing numpy for a list of floats."""
    if hasattr(vector, "astype"):  # a numpy array
        return vector.astype("<f4", copy=False).tobytes(order="C")
    from array import array

    return array("f", vector).tobytes()


def _batch_step(batches: Any, ids: list, k: int, apply: Any) -> tuple[int, int]:
    """One write transaction's share of ``ids`` from ``k``: up to the batcher's size or time budget, in
    steps (``jobs.batches.run_steps``), or ``MOVE_BATCH`` keys without a batcher; ``(next k, changed)``."""
    if batches is not None:
        from .jobs.batches import run_steps

        return run_steps(batches, ids, k, apply)
    return k + MOVE_BATCH, apply(ids[k : k + MOVE_BATCH])


class _Closed:
    """Stands for the connection of a closed store: any use raises :class:`StoreClosedError`
    (not the driver's ``ProgrammingError``)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        raise StoreClosedError(f"the store on {self._name} is closed: open a new MemoryStore to go on")


class SQLiteBackend:
    """One database file. Thread-safe through a re-entrant lock around the connection.

    Implements :class:`harness_memory.backend.Backend`."""

    dialect = "sqlite"
    local_vector_index = True  # every vector write is logged in vector_changes: a process-local copy catches up
    DatabaseError = sqlean.DatabaseError

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 30_000):
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.conn: sqlean.Connection | _Closed = connect(self.path, busy_timeout_ms=busy_timeout_ms)
        self.lock = threading.RLock()
        self._depth = 0
        self._rowid_tables: dict[str, bool] = {}  # insert_returning: tables whose id is the rowid

    def describe(self) -> str:
        return str(self.path)

    def fork(self) -> SQLiteBackend:
        """A handle for another thread: its own connection to the same file."""
        return SQLiteBackend(self.path, busy_timeout_ms=self.busy_timeout_ms)

    def check_writable(self) -> None:
        """Refuse a database this process may not write (the file, or its folder where SQLite keeps
        the WAL and shared-memory files) without taking a lock to find out."""
        import os

        folder = self.path.parent if str(self.path.parent) else Path(".")
        for t in (self.path, folder):
            if t.exists() and not os.access(t, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
                raise DatabaseReadOnlyError(
                    f"{self.path} is read-only (the file or its folder, where SQLite keeps "
                    "the WAL): open it where this process may write"
                )

    # -- schema steps ----------------------------------------------------------------------
    @staticmethod
    def migration_steps() -> list[tuple[str, str]]:
        from .migrations import steps

        return steps("sqlite")

    @staticmethod
    def split_script(sql: str) -> list[str]:
        """Split a migration into statements (executescript would commit our transaction)."""
        out, buf = [], []
        for line in sql.splitlines():
            stripped = line.strip()
            if stripped.startswith("--") or not stripped:
                continue
            buf.append(line)
            if stripped.endswith(";") and sqlean.complete_statement("\n".join(buf)):  # a trigger body holds ";"
                stmt = "\n".join(buf).strip()
                out.append(stmt)
                buf = []
        if buf:
            out.append("\n".join(buf))
        return out

    def before_migrations(self) -> None:
        return None

    # -- SQL fragments that differ between engines ----------------------------------------------
    @staticmethod
    def greatest(a: str, b: str) -> str:
        return f"MAX({a}, {b})"

    @staticmethod
    def least(a: str, b: str) -> str:
        return f"MIN({a}, {b})"

    @staticmethod
    def json_text(column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    # -- error→fix links -----------------------------------------------------------------
    def similar_errors(
        self, terms: Sequence[str], k: int, where: str = "1 = 1", params: Sequence[Any] = ()
    ) -> list[tuple[int, str]]:
        """``(link id, excerpt)`` of the ``k`` linked errors whose excerpts match ``terms`` best (BM25; the rarest
        terms only, see ``_similar``), among the links whose memory ``m`` passes ``where``."""
        return self._similar("fix_errors_fts", "excerpt", "fix_errors_vocab", terms, k, where, params)

    def similar_blocks(
        self, terms: Sequence[str], k: int, where: str = "1 = 1", params: Sequence[Any] = ()
    ) -> list[tuple[int, str]]:
        """``(link id, failure block)`` of the ``k`` linked errors whose failure blocks (``fix_links.error_instance``)
        match ``terms`` best (BM25; the rarest terms only, see ``_similar``), among the links whose memory ``m``
        passes ``where``."""
        return self._similar("fix_blocks_fts", "block", "fix_blocks_vocab", terms, k, where, params)

    def _similar(
        self, table: str, column: str, vocab: str, terms: Sequence[str], k: int, where: str, params: Sequence[Any]
    ) -> list[tuple[int, str]]:
        """The ``k`` best BM25 matches of ``terms`` in a fix-links index, its cost bounded (``backend.rarest_terms``:
        in an index of more than ``SIMILAR_POSTINGS`` links, the rarest terms, or the newest links). Document counts
        come from the index's fts5vocab table, cached per stem while the index is within 10 % of the size they were
        read at (counting a common word walks its whole posting list)."""
        if not terms:
            return []
        with self.lock:  # one connection: the stemmer's temporary table and the counts must not interleave
            c = self.conn
            terms = list(terms)
            lowest = 0
            size = int(c.execute("SELECT COALESCE(MAX(id), 0) FROM fix_links").fetchone()[0])
            if size > SIMILAR_POSTINGS:
                if len(getattr(self, "_df", ())) > 200_000:
                    self._df.clear()
                df = self._counts(vocab, terms, size, f"{vocab}\x00")
                terms, lowest = rarest_terms(terms, df, size, SIMILAR_POSTINGS)
                if not terms:
                    return []
            # visibility inside the search: links the asker may not see never crowd out the k it may
            return c.execute(
                f"SELECT f.rowid, f.{column} FROM {table} f JOIN fix_links l ON l.id = f.rowid "
                f"JOIN memories m ON m.id = l.memory_id WHERE {table} MATCH ? AND f.rowid > ? AND {where} "
                f"ORDER BY bm25({table}) LIMIT ?",
                (match_expression(terms), lowest, *params, k),
            ).fetchall()

    # -- transactions -------------------------------------------------------------------
    @contextmanager
    def write(self) -> Iterator[sqlean.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``); nested calls join the outer one."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            self._begin("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self._depth = 0
                self.conn.execute("ROLLBACK")
                raise
            self._depth = 0
            self.conn.execute("COMMIT")

    @contextmanager
    def try_write(self) -> Iterator[sqlean.Connection | None]:
        """A write transaction if the write lock is free right now, else ``None`` (never waits).
        Nested in a write, it joins it."""
        with self.lock:
            if self._depth:
                with self.write() as c:
                    yield c
                return
            self.conn.execute("PRAGMA busy_timeout = 0")
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                got = True
            except OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                got = False
            finally:
                self.conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if not got:
                yield None
                return
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self._depth = 0
                self.conn.execute("ROLLBACK")
                raise
            self._depth = 0
            self.conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[sqlean.Connection]:
        """A consistent snapshot for several reads (joins an enclosing write)."""
        with self.lock:
            if self._depth:
                yield self.conn
                return
            self.conn.execute("BEGIN")
            self._depth = 1
            try:
                yield self.conn
            finally:
                self._depth = 0
                self.conn.execute("COMMIT")

    # a waiting writer tries again after these pauses (then every last one) until busy_timeout_ms
    _POLL = (0.0005, 0.001, 0.002)

    def _begin(self, sql: str) -> None:
        # The wait for the write lock is this loop, with SQLite's busy handler off for the BEGIN:
        # SQLite's own handler sleeps up to 100 ms between tries, so a writer behind a job that
        # commits every 50 ms could miss the job's short gaps again and again (seconds of waiting);
        # tried every 2 ms it takes the lock in the first gap (jobs.batches pauses longer between
        # batches). The wait ends after busy_timeout_ms with the library's own error.
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        tries = 0
        self.conn.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    self.conn.execute(sql)
                    return
                except OperationalError as exc:
                    msg = str(exc)
                    if "readonly" in msg or "read-only" in msg:
                        raise DatabaseReadOnlyError(f"{self.path} is read-only: {msg}") from exc
                    if "locked" not in msg and "busy" not in msg:
                        raise
                    if time.monotonic() > deadline:
                        raise DatabaseLockedError(
                            f"{self.path} stayed locked by another writer for longer than busy_timeout_ms "
                            f"({self.busy_timeout_ms} ms)"
                        ) from exc
                    time.sleep(self._POLL[min(tries, len(self._POLL) - 1)])
                    tries += 1
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def close(self) -> None:
        with self.lock:
            if isinstance(self.conn, _Closed):
                return
            self.conn.close()
            self.conn = _Closed(self.path.name)

    def execute(self, sql: str, params: Sequence[Any] | dict = ()) -> sqlean.Cursor:
        with self.lock:
            return self.conn.execute(sql, params)

    @staticmethod
    def unindexed(column: str) -> str:
        """``column`` in a form the planner will not use an index for (SQLite's unary plus)."""
        return "+" + column

    def table_exists(self, name: str) -> bool:
        row = self.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        return row is not None

    # -- keyword index (FTS5) -------------------------------------------------------------
    # memories_fts is created by migration 0001: contentless, porter stemmer, rowid = memories.id.

    def index_text(self, memory_id: int, content: str, tags: Sequence[str], *, new: bool = False) -> None:
        if not new:
            self.conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (memory_id,))
        self.conn.execute(
            "INSERT INTO memories_fts(rowid, content, tags) VALUES (?, ?, ?)", (memory_id, content, " ".join(tags))
        )

    def unindex_text(self, memory_ids: Sequence[int]) -> None:
        self.conn.executemany("DELETE FROM memories_fts WHERE rowid = ?", [(i,) for i in memory_ids])

    def keyword_search(
        self,
        text: str,
        where: str,
        params: Sequence[Any],
        limit: int,
        posting_budget: int | None = None,
        hidden: bytearray | None = None,
    ) -> list[tuple[int, float]]:
        """``(memory_id, bm25)`` pairs, best first; bm25 is positive, larger is better.

        ``where`` is a SQL condition on alias ``m`` (the memories table). BM25 costs time per
        matching row, so with ``posting_budget`` the query keeps its rarest terms while their
        summed document frequencies fit the budget (always at least the rarest one): terms
        that occur nearly everywhere carry almost no BM25 weight but dominate the cost. If
        the rarest term alone exceeds the budget, only the newest documents are ranked.

        ``hidden`` (``VectorIndex.hidden``): a byte per memory id, 1 for a memory ``where`` is known
        to reject; such rows are left out before BM25 scores them (BM25 costs ~2.5 µs a row, and at
        100k memories an agent sees about a third of a query's matches). The answer is the same:
        the best ``limit`` rows that pass ``where``, in the same order (ties by rowid either way).
        """
        terms = query_terms(text)[:32]
        if not terms:
            return []
        min_rowid = 0
        if posting_budget is not None:
            terms, postings, size = self._prune_terms(terms, posting_budget)
            if postings > posting_budget:
                # Even the rarest term is common: rank only the newest documents, about
                # `posting_budget` of the matches (FTS5 seeks by rowid inside its posting lists).
                # The vector channel still covers the whole store.
                min_rowid = int(size - size * posting_budget / postings)
        return self._ranked(match_expression(terms), where, params, limit, min_rowid, hidden)

    def _ranked(
        self,
        match: str,
        where: str,
        params: Sequence[Any],
        limit: int,
        min_rowid: int,
        hidden: bytearray | None = None,
    ) -> list[tuple[int, float]]:
        # First rank without the join (BM25 only), then filter that short list by primary key;
        # fall back to the filtering join when the filter removed too many. With ``hidden``, the
        # rows it marks are dropped before BM25 (a function of the rowid, evaluated first): the
        # short list is then of rows ``where`` may pass, in the order the full list has them.
        over = 8 * limit
        pre = ""
        if hidden is not None:
            if self._shown_conn is not self.conn:
                self.conn.create_function("hm_shown", 1, self._shown)
                self._shown_conn = self.conn
            pre = " AND hm_shown(rowid)"
        top = (
            "SELECT x.rowid, x.s FROM (SELECT rowid, -bm25(memories_fts, 1.0, 0.5) AS s FROM memories_fts "
            f"WHERE memories_fts MATCH ? AND rowid > ?{pre} ORDER BY s DESC LIMIT ?) x "
            f"JOIN memories m ON m.id = x.rowid WHERE {where} ORDER BY x.s DESC LIMIT ?"
        )
        full = (
            "SELECT f.rowid, -bm25(memories_fts, 1.0, 0.5) AS s FROM memories_fts f "
            "JOIN memories m ON m.id = f.rowid "
            f"WHERE memories_fts MATCH ? AND f.rowid > ?{pre} AND {where} ORDER BY s DESC LIMIT ?"
        )
        with self.lock:
            self._hidden_marks = hidden
            try:
                rows = self.conn.execute(top, (match, min_rowid, over, *params, limit)).fetchall()
                if len(rows) < limit:
                    n_ranked = self.conn.execute(
                        "SELECT COUNT(*) FROM (SELECT 1 FROM memories_fts "
                        f"WHERE memories_fts MATCH ? AND rowid > ?{pre} LIMIT ?)",
                        (match, min_rowid, over),
                    ).fetchone()[0]
                    if n_ranked == over:  # the short list was cut: rank everything that is visible
                        rows = self.conn.execute(full, (match, min_rowid, *params, limit)).fetchall()
            finally:
                self._hidden_marks = None
            return [(int(r[0]), float(r[1])) for r in rows]

    _shown_conn: Any = None  # the connection hm_shown is registered on
    _hidden_marks: bytearray | None = None  # the marks of the keyword query running now

    def _shown(self, rowid: int) -> bool:
        """``hm_shown(rowid)``: false for a row the running query's ``hidden`` marks."""
        marks = self._hidden_marks
        return marks is None or rowid >= len(marks) or not marks[rowid]

    def term_frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """``(documents, {term: documents containing it})`` from the FTS5 vocabulary, each term
        stemmed by the index's own tokenizer (recall's confidence IDFs, harness_memory/confidence.py).

        One read snapshot: read in separate statements, another process's commit in between made a
        count exceed the store size (a negative IDF argument)."""
        terms = list(terms)
        with self.read() as c:
            # the index's size as BM25 sees it, without a count: ids are dense enough for an IDF
            n_docs = c.execute("SELECT COALESCE(MAX(id), 0) FROM memories").fetchone()[0]
            # In a large store a common word's count costs a walk over its whole posting list (ms
            # each at 100k): reuse the counts the keyword channel's term pruning read (within 10%
            # of the store's size, as it does; confidence clamps a count above the size).
            stems_seen = getattr(self, "_stems", None) if n_docs > self.DF_CACHE_MIN else None
            df_seen = getattr(self, "_df", None) if stems_seen is not None else None
            stems = {t: stems_seen[t] for t in terms if stems_seen is not None and t in stems_seen}
            new = [t for t in terms if t not in stems]
            if new:
                c.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_conf_tok USING fts5("
                    "w, tokenize = 'porter unicode61 remove_diacritics 2')"
                )
                c.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_conf_tok_v USING fts5vocab(temp, hm_conf_tok, instance)"
                )
                c.execute("DELETE FROM temp.hm_conf_tok")
                c.executemany("INSERT INTO temp.hm_conf_tok(rowid, w) VALUES (?, ?)", list(enumerate(new)))
                stems.update({new[doc]: stem for doc, stem in c.execute("SELECT doc, term FROM temp.hm_conf_tok_v")})
            df = {}
            for t in terms:
                stem = stems.get(t, t)
                cached = df_seen.get(stem) if df_seen is not None else None
                if cached is not None and 0.9 * cached[1] <= n_docs <= 1.1 * cached[1]:
                    df[t] = int(cached[0])
                    continue
                r = c.execute("SELECT doc FROM memories_fts_vocab WHERE term = ?", (stem,)).fetchone()
                df[t] = int(r[0]) if r else 0
                if df_seen is not None:
                    df_seen[stem] = (df[t], n_docs)
        return int(n_docs), df

    DF_CACHE_MIN = 1500  # documents: below this, term counts are read afresh on every recall (they are cheap)

    def _stem(self, terms: Sequence[str]) -> None:
        """Put the index's stem of each of ``terms`` into ``self._stems`` (the porter tokenizer of the keyword
        indexes, run on a temporary FTS5 table); the term counts read by stem are cached in ``self._df``."""
        c = self.conn
        if not hasattr(self, "_stems"):
            self._stems: dict[str, str] = {}
            self._df: dict[str, tuple[int, int]] = {}
            c.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_qtok USING fts5("
                "w, tokenize = 'porter unicode61 remove_diacritics 2')"
            )
            c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_qtok_v USING fts5vocab(temp, hm_qtok, instance)")
        new = [t for t in terms if t not in self._stems]
        if new:
            c.execute("DELETE FROM temp.hm_qtok")
            c.executemany("INSERT INTO temp.hm_qtok(rowid, w) VALUES (?, ?)", list(enumerate(new)))
            for doc, stem in c.execute("SELECT doc, term FROM temp.hm_qtok_v"):
                self._stems[new[doc]] = stem
            if len(self._stems) > 200_000:
                self._stems.clear()

    def _counts(self, vocab: str, terms: Sequence[str], size: int, prefix: str = "") -> dict[str, int]:
        """``{term: documents holding its stem}`` from an fts5vocab ``row`` table of an index of ``size`` documents,
        through ``self._df`` (keyed ``prefix`` + stem): a count is read again once the index is not within 10 % of the
        size it was read at (counting a common word walks its whole posting list)."""
        self._stem(terms)
        df: dict[str, int] = {}
        for t in terms:
            stem = self._stems.get(t, t)
            cached = self._df.get(prefix + stem)
            if cached is None or size > cached[1] * 1.1 or size < cached[1] * 0.9:
                r = self.conn.execute(f"SELECT doc FROM {vocab} WHERE term = ?", (stem,)).fetchone()
                cached = self._df[prefix + stem] = (int(r[0]) if r else 0, size)
            df[t] = cached[0]
        return df

    def _prune_terms(self, terms: list[str], budget: int) -> tuple[list[str], int, int]:
        """``(kept_terms, their_summed_document_frequency, store_size)``."""
        c = self.conn
        size = c.execute("SELECT COALESCE(MAX(id), 0) FROM memories").fetchone()[0]
        if size <= budget:
            return terms, 0, size
        df = self._counts("memories_fts_vocab", terms, size)
        ranked = sorted(terms, key=lambda t: df[t])
        kept: list[str] = []
        total = 0
        for t in ranked:
            # a word no document held when its count was read costs nothing and may match a row written
            # since (the counts are cached): kept, but it is not the "at least the rarest one" the
            # query always keeps, which must be a word that matches
            if total and total + df[t] > budget:
                break
            kept.append(t)
            total += df[t]
        return kept, total, size

    # -- vector table (vec0) --------------------------------------------------------------
    VEC_TABLE = "memory_vectors"

    # Bulk deletes leave a memory's vec0 row behind (sqlite-vec deletes one row at a time, ~0.1-0.3 ms
    # each, and frees no space until a chunk is empty) and record its id here; the compact job
    # deletes those rows in bounded batches (purge_removed_vectors). Such a row is an orphan: its
    # memory is gone, its 'del' is in the change log (in-process indexes drop it at once), every
    # SQL path joins the memories table, and vector_knn leaves orphans out. A memory id is reused
    # only after the largest ids were deleted (no AUTOINCREMENT): the trigger deletes an orphan
    # row when a memory with its id is inserted, so a live memory's vec0 row is always its own.
    REMOVED_TABLE = "memory_vectors_removed"

    def _removed_schema(self) -> None:
        """The table of orphaned vec0 rows and the trigger that clears one whose id is reused (the
        trigger names the vec0 table, so it exists only with it)."""
        t, v = self.REMOVED_TABLE, self.VEC_TABLE
        self.conn.execute(f"CREATE TABLE IF NOT EXISTS {t} (memory_id INTEGER PRIMARY KEY)")
        self.conn.execute(
            f"CREATE TRIGGER IF NOT EXISTS {t}_reused AFTER INSERT ON memories "
            f"WHEN EXISTS (SELECT 1 FROM {t} WHERE memory_id = new.id) BEGIN "
            f"DELETE FROM {v} WHERE memory_id = new.id; DELETE FROM {t} WHERE memory_id = new.id; END"
        )

    def create_vector_table(self, dimensions: int) -> None:
        """(Re)create the vec0 table. Partitioned by namespace; the fields recall filters on
        are metadata columns, so filters apply inside the KNN (never after it)."""
        self.conn.execute(f"DROP TRIGGER IF EXISTS {self.REMOVED_TABLE}_reused")
        self.conn.execute(f"DROP TABLE IF EXISTS {self.VEC_TABLE}")
        self.conn.execute(f"DROP TABLE IF EXISTS {self.REMOVED_TABLE}")  # its orphans went with the table
        self.conn.execute(
            f"CREATE VIRTUAL TABLE {self.VEC_TABLE} USING vec0("
            "memory_id INTEGER PRIMARY KEY, namespace TEXT PARTITION KEY, "
            "agent_id TEXT, scope TEXT, memory_type TEXT, archived INTEGER, "
            f"embedding float[{int(dimensions)}] distance_metric=cosine)"
        )

    def vector_dimensions(self) -> int | None:
        row = self.execute("SELECT sql FROM sqlite_master WHERE name = ?", (self.VEC_TABLE,)).fetchone()
        if row is None:
            return None
        m = re.search(r"float\[(\d+)\]", row[0])
        return int(m.group(1)) if m else None

    _PUT_VECTOR_SQL = (
        f"INSERT INTO {VEC_TABLE}(memory_id, namespace, agent_id, scope, memory_type, archived, embedding) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"
    )

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
        # vec0 rejects INSERT OR REPLACE / ON CONFLICT: delete then insert, inside the caller's
        # transaction (a savepoint when called within one), and log the change for caches.
        c = self.conn
        row = (memory_id, namespace, agent_id, scope, memory_type, int(archived), float32_bytes(vector))
        if new and self._depth:
            # a new memory's vector, inside the write that inserted its row (writes._insert): that
            # write's rollback takes back the row, the vector and the log row together, and no
            # caller goes on after a failure in between (a savepoint would add two statements)
            c.execute(self._PUT_VECTOR_SQL, row)
            c.execute("INSERT INTO vector_changes(memory_id, op) VALUES (?, 'put')", (memory_id,))
            return
        c.execute("SAVEPOINT put_vector")
        try:
            if not new:
                c.execute(f"DELETE FROM {self.VEC_TABLE} WHERE memory_id = ?", (memory_id,))
            c.execute(self._PUT_VECTOR_SQL, row)
            c.execute("INSERT INTO vector_changes(memory_id, op) VALUES (?, 'put')", (memory_id,))
        except BaseException:
            c.execute("ROLLBACK TO put_vector")
            c.execute("RELEASE put_vector")
            raise
        c.execute("RELEASE put_vector")

    def remove_vectors(self, memory_ids: Sequence[int]) -> None:
        if not memory_ids or not self.table_exists(self.VEC_TABLE):
            return
        self.conn.executemany(f"DELETE FROM {self.VEC_TABLE} WHERE memory_id = ?", [(i,) for i in memory_ids])
        self.conn.executemany("INSERT INTO vector_changes(memory_id, op) VALUES (?, 'del')", [(i,) for i in memory_ids])

    def remove_vectors_later(self, memory_ids: Sequence[int]) -> None:
        """:meth:`remove_vectors` for a bulk delete: the vec0 rows stay until the compact job purges
        them (see ``REMOVED_TABLE``); the change log records the deletes now. The caller deletes
        the memories rows in the same transaction."""
        if not memory_ids or not self.table_exists(self.VEC_TABLE):
            return
        self._removed_schema()
        rows = [(i,) for i in memory_ids]
        self.conn.executemany(f"INSERT OR IGNORE INTO {self.REMOVED_TABLE}(memory_id) VALUES (?)", rows)
        self.conn.executemany("INSERT INTO vector_changes(memory_id, op) VALUES (?, 'del')", rows)

    def removed_vectors(self) -> int:
        """How many orphaned vec0 rows wait for the compact job."""
        if not self.table_exists(self.REMOVED_TABLE):
            return 0
        return int(self.execute(f"SELECT COUNT(*) FROM {self.REMOVED_TABLE}").fetchone()[0])

    def purge_removed_vectors(
        self, batches: BatchSizer | None = None, progress: Callable[[int], None] | None = None
    ) -> int:
        """Delete the orphaned vec0 rows of bulk deletes, in short write transactions (``batches``
        sizes them); returns how many. Resumable: each batch re-reads its ids inside its
        transaction."""
        if not self.table_exists(self.REMOVED_TABLE):
            return 0
        t, v = self.REMOVED_TABLE, self.VEC_TABLE
        purged = 0
        while True:
            ids = [r[0] for r in self.execute(f"SELECT memory_id FROM {t} ORDER BY memory_id LIMIT 50000")]
            if not ids:
                return purged
            k = 0
            while k < len(ids):
                with batches.transaction(self) if batches is not None else self.write() as c:

                    def purge(chunk: list[int]) -> int:
                        marks = ",".join("?" * len(chunk))
                        still = [
                            (r[0],) for r in c.execute(f"SELECT memory_id FROM {t} WHERE memory_id IN ({marks})", chunk)
                        ]
                        c.executemany(f"DELETE FROM {v} WHERE memory_id = ?", still)
                        c.executemany(f"DELETE FROM {t} WHERE memory_id = ?", still)
                        return len(still)

                    k, n = _batch_step(batches, ids, k, purge)
                purged += n
                if progress is not None and n:
                    progress(n)

    def set_vectors_archived(self, memory_ids: Sequence[int], archived: bool) -> None:
        """Flip the ``archived`` metadata column in place (vec0 updates metadata without a re-insert)."""
        c = self.conn
        c.executemany(
            f"UPDATE {self.VEC_TABLE} SET archived = ? WHERE memory_id = ?", [(int(archived), i) for i in memory_ids]
        )
        c.executemany("INSERT INTO vector_changes(memory_id, op) VALUES (?, 'put')", [(i,) for i in memory_ids])

    def get_vectors(self, memory_ids: Sequence[int]) -> dict[int, np.ndarray]:
        import numpy as np

        out: dict[int, np.ndarray] = {}
        with self.lock:
            for i in memory_ids:
                row = self.conn.execute(f"SELECT embedding FROM {self.VEC_TABLE} WHERE memory_id = ?", (i,)).fetchone()
                if row is not None:
                    out[i] = np.frombuffer(row[0], dtype=np.float32)
        return out

    def iter_vectors(self, since_seq: int | None = None, batch: int = 5000):
        """Yield ``(memory_id, namespace, agent_id, scope, memory_type, archived, vector)``.

        With ``since_seq``, only memories changed after that change-log sequence (deleted
        ones come back with ``vector=None``).
        """
        import numpy as np

        c = self.conn
        if since_seq is None:
            cur = c.execute(
                f"SELECT memory_id, namespace, agent_id, scope, memory_type, archived, embedding FROM {self.VEC_TABLE}"
            )
            for row in cur:
                yield (*row[:6], np.frombuffer(row[6], dtype=np.float32))
            return
        ids = [r[0] for r in c.execute("SELECT DISTINCT memory_id FROM vector_changes WHERE seq > ?", (since_seq,))]
        # A catch-up after a job's batch reads thousands of rows (an archive flips 1,000s of rows'
        # metadata): the filter fields come from the memories table (kept equal to vec0's; vec0
        # reads its metadata columns slowly), and the vectors of a chunk with several changed rows
        # from that chunk's vector blob, read once (a point query costs 0.1-0.5 ms each)
        dims = self.vector_dimensions() or 0
        for s in range(0, len(ids), 2000):
            chunk = ids[s : s + 2000]
            marks = ",".join("?" * len(chunk))
            meta = {
                r[0]: r[1:]
                for r in c.execute(
                    f"SELECT id, namespace, agent_id, scope, memory_type, archived FROM memories WHERE id IN ({marks})",
                    chunk,
                )
            }
            vecs = self._vectors_by_chunk([i for i in chunk if i in meta], dims)
            for i in chunk:
                m, v = meta.get(i), vecs.get(i)
                if m is None or v is None:
                    yield (i, None, None, None, None, None, None)
                else:
                    yield (i, *m, v)

    CHUNK_READ_MIN = 4  # changed rows in one vec0 chunk from which its whole vector blob is read

    def _vectors_by_chunk(self, ids: Sequence[int], dims: int) -> dict[int, np.ndarray]:
        """The vectors of ``ids`` (those without one left out): a chunk's blob read whole when it holds
        ``CHUNK_READ_MIN`` of them (sqlite-vec 0.1.9's layout: slot ``chunk_offset`` of the float32
        blob in ``<table>_vector_chunks00``), otherwise one point query each."""
        import numpy as np

        c, t = self.conn, self.VEC_TABLE
        out: dict[int, np.ndarray] = {}
        if not ids:
            return out
        slots: dict[int, list[tuple[int, int]]] = {}
        for rid, chunk_id, offset in c.execute(
            f"SELECT rowid, chunk_id, chunk_offset FROM {t}_rowids WHERE rowid IN ({','.join('?' * len(ids))})", ids
        ):
            slots.setdefault(chunk_id, []).append((rid, offset))
        for chunk_id, members in slots.items():
            blob = None
            if len(members) >= self.CHUNK_READ_MIN and dims:
                row = c.execute(f"SELECT vectors FROM {t}_vector_chunks00 WHERE rowid = ?", (chunk_id,)).fetchone()
                if row is not None and len(row[0]) % (4 * dims) == 0:
                    blob = np.frombuffer(row[0], dtype=np.float32).reshape(-1, dims)
            for rid, offset in members:
                if blob is not None and offset < len(blob):
                    out[rid] = blob[offset].copy()
                else:
                    r = c.execute(f"SELECT embedding FROM {t} WHERE memory_id = ?", (rid,)).fetchone()
                    if r is not None:
                        out[rid] = np.frombuffer(r[0], dtype=np.float32)
        return out

    def vector_change_seq(self) -> tuple[int, int]:
        """``(min_seq, max_seq)`` of the change log (0, 0 when empty)."""
        lo = self.conn.execute("SELECT MIN(seq) FROM vector_changes").fetchone()[0] or 0
        hi = self.conn.execute("SELECT MAX(seq) FROM vector_changes").fetchone()[0] or 0
        return int(lo), int(hi)

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
        """KNN over what an agent may see. vec0 cannot push "own OR global" or IN down into the
        KNN: one exact query per visibility branch and type."""
        out: dict[int, float] = {}
        branches: list[dict[str, Any]] = []
        if agent_id is not None:
            branches.append({"agent_id": agent_id})
        if include_global or agent_id is None:
            branches.append({"scope": "global"})
        memory_types: Sequence[str | None] = types or [None]
        for br in branches:
            for t in memory_types:
                for mid, sim in self.vector_knn(
                    vector, namespace=namespace, k=k, memory_type=t, include_archived=include_archived, **br
                ):
                    out[mid] = sim
        return sorted(out.items(), key=lambda x: -x[1])[:k]

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
        """Exact KNN inside vec0 with the filters applied inside the scan.

        Returns ``(memory_id, cosine_similarity)``. vec0 does not push ``OR`` down, so a
        caller wanting "own or global" issues two calls.
        """
        conds = ["embedding MATCH ?", "k = ?", "namespace = ?"]
        params: list[Any] = [float32_bytes(vector), int(k), namespace]
        if agent_id is not None:
            conds.append("agent_id = ?")
            params.append(agent_id)
        if scope is not None:
            conds.append("scope = ?")
            params.append(scope)
        if memory_type is not None:
            conds.append("memory_type = ?")
            params.append(memory_type)
        if not include_archived:
            conds.append("archived = 0")
        with self.lock:
            removed = self.removed_vectors()
            if removed == 0:
                sql = f"SELECT memory_id, distance FROM {self.VEC_TABLE} WHERE " + " AND ".join(conds)
                return [(int(r[0]), 1.0 - float(r[1])) for r in self.conn.execute(sql, params)]
            if k + removed > VEC0_MAX_K:
                # more orphans (rows of bulk deletes not purged yet) than one KNN can step over:
                # the exact answer over the memories table, which has none
                where = ["m.namespace = ?"]
                wparams: list[Any] = [namespace]
                for col, val in (("agent_id", agent_id), ("scope", scope), ("memory_type", memory_type)):
                    if val is not None:
                        where.append(f"m.{col} = ?")
                        wparams.append(val)
                if not include_archived:
                    where.append("m.archived = 0")
                return self.vector_exact(vector, " AND ".join(where), wparams, k)
            # at most ``removed`` orphans rank before the k-th live row: ask for that many more
            params[1] = int(k + removed)
            sql = f"SELECT memory_id, distance FROM {self.VEC_TABLE} WHERE " + " AND ".join(conds)
            hits = [(int(r[0]), 1.0 - float(r[1])) for r in self.conn.execute(sql, params)]
            if not hits:
                return hits
            marks = ",".join("?" * len(hits))
            gone = {
                r[0]
                for r in self.conn.execute(
                    f"SELECT memory_id FROM {self.REMOVED_TABLE} WHERE memory_id IN ({marks})", [h[0] for h in hits]
                )
            }
            return [h for h in hits if h[0] not in gone][:k]

    # -- batches (writes.write_many): loops of the single-row statements (in-process, no round trips)
    def existing_hashes(self, keys: Sequence[tuple[str, str, str, str, str]]) -> dict[tuple, int]:
        """The oldest un-keyed, non-thread memory per ``(namespace, agent, scope, type, content hash)``."""
        out: dict[tuple, int] = {}
        rows = [tuple(k) for k in keys]
        for i in range(0, len(rows), 150):  # one statement per 150 keys (750 parameters: under any build's 999)
            chunk = rows[i : i + 150]
            sql = (
                "WITH k(n, a, s, t, h) AS (VALUES "
                + ",".join(["(?, ?, ?, ?, ?)"] * len(chunk))
                + ") SELECT k.n, k.a, k.s, k.t, k.h, (SELECT id FROM memories WHERE namespace = k.n "
                "AND agent_id = k.a AND scope = k.s AND memory_type = k.t AND content_hash = k.h AND key IS NULL "
                "AND thread_id IS NULL ORDER BY id LIMIT 1) FROM k"
            )
            for r in self.conn.execute(sql, [x for key in chunk for x in key]):
                if r[5] is not None:
                    out[tuple(r[:5])] = int(r[5])
        return out

    def insert_returning(self, sql: str, rows: Sequence[Sequence[Any]]) -> list[int]:
        """Run an ``INSERT … RETURNING id`` once per row; the ids in order. Inside a write, several
        rows of an ``INSERT INTO t(cols) VALUES (…) RETURNING id`` into a table whose ``id`` is its
        rowid (no AUTOINCREMENT) go in one ``executemany`` with the ids the rows would have been given
        one after the other: each one larger than the largest in the table (SQLite's rule; the write
        lock keeps every other writer out), which costs about two thirds of a statement per row."""
        m = _INSERT_RETURNING_ID.fullmatch(sql) if len(rows) > 1 and self._depth else None
        if m is not None and self._rowid_table(m.group(1)):
            cols = [c.strip() for c in m.group(2).split(",")]
            top = int(self.conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {m.group(1)}").fetchone()[0])
            if "id" not in cols and top + len(rows) < 2**63 - 1:  # past it SQLite picks free ids at random
                ids = list(range(top + 1, top + 1 + len(rows)))
                self.conn.executemany(
                    f"INSERT INTO {m.group(1)}(id, {m.group(2).strip()}) VALUES (?, {m.group(3).strip()})",
                    [(i, *r) for i, r in zip(ids, rows)],
                )
                return ids
        return [int(self.conn.execute(sql, r).fetchone()[0]) for r in rows]

    def _rowid_table(self, table: str) -> bool:
        """Whether ``table``'s ``id`` is its rowid (``INTEGER PRIMARY KEY``) without AUTOINCREMENT
        (whose ids never reuse a deleted one's: not the largest plus one)."""
        if table not in self._rowid_tables:
            row = self.conn.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
            pk = [r for r in self.conn.execute(f"PRAGMA table_info({table})") if r[5]]
            self._rowid_tables[table] = bool(
                row
                and len(pk) == 1
                and pk[0][1] == "id"
                and str(pk[0][2]).upper() == "INTEGER"
                and "AUTOINCREMENT" not in str(row[0]).upper()
            )
        return self._rowid_tables[table]

    def index_texts(self, rows: Sequence[tuple[int, str, Sequence[str]]]) -> None:
        """The keyword rows of new memories, in one statement."""
        self.conn.executemany(
            "INSERT INTO memories_fts(rowid, content, tags) VALUES (?, ?, ?)",
            [(mid, content, " ".join(tags)) for mid, content, tags in rows],
        )

    def put_vectors(self, rows: Sequence[tuple[int, str, str, str, str, bool, np.ndarray]]) -> None:
        """The vectors of new memories (no row to replace) and their change-log rows: one statement
        per table, under one savepoint (all of them or none)."""
        if not rows:
            return
        c = self.conn
        c.execute("SAVEPOINT put_vectors")
        try:
            c.executemany(
                f"INSERT INTO {self.VEC_TABLE}(memory_id, namespace, agent_id, scope, memory_type, archived, embedding) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (mid, ns, agent, scope, mtype, int(arch), float32_bytes(v))
                    for mid, ns, agent, scope, mtype, arch, v in rows
                ],
            )
            c.executemany("INSERT INTO vector_changes(memory_id, op) VALUES (?, 'put')", [(r[0],) for r in rows])
        except BaseException:
            c.execute("ROLLBACK TO put_vectors")
            c.execute("RELEASE put_vectors")
            raise
        c.execute("RELEASE put_vectors")

    def vector_knn_many(
        self, queries: Sequence[tuple[np.ndarray, str, str, str, str]], k: int, min_sim: float | None = None
    ) -> list[list[tuple[int, float]]]:
        return [
            self.vector_knn(v, namespace=ns, agent_id=a, scope=s, memory_type=t, include_archived=True, k=k)
            for v, ns, a, s, t in queries
        ]

    def vector_exact(self, vector: Any, where: str, params: Sequence[Any], k: int) -> list[tuple[int, float]]:
        """Exact KNN: ``(memory_id, cosine)`` of the ``k`` rows passing ``where`` (a condition on alias
        ``m``, the memories table) nearest ``vector``, best first.

        sqlite-vec computes the cosine in C over the filtered rows (no numpy, no index to load):
        the vector channel of a small store, and the reference the in-process index is tested
        against. ``vector`` is any sequence of floats or a float32 buffer."""
        # CROSS JOIN keeps memories as the outer loop: the filter runs first and only visible rows'
        # vectors are read (by primary key); the planner otherwise scans the whole vec0 table
        sql = (
            f"SELECT v.memory_id, vec_distance_cosine(v.embedding, ?) AS d FROM memories m "
            f"CROSS JOIN {self.VEC_TABLE} v ON v.memory_id = m.id WHERE {where} ORDER BY d, v.memory_id LIMIT ?"
        )
        with self.lock:
            return [
                (int(r[0]), 1.0 - float(r[1])) for r in self.conn.execute(sql, (float32_bytes(vector), *params, int(k)))
            ]

    def vector_similarities(self, vector: Any, memory_ids: Sequence[int]) -> dict[int, float]:
        """Cosine of ``vector`` with each stored vector of ``memory_ids`` (those without one are left out)."""
        out: dict[int, float] = {}
        q = float32_bytes(vector)
        ids = list(memory_ids)
        with self.lock:
            for s in range(0, len(ids), 500):
                chunk = ids[s : s + 500]
                sql = (
                    f"SELECT v.memory_id, vec_distance_cosine(v.embedding, ?) FROM memories m "
                    f"CROSS JOIN {self.VEC_TABLE} v ON v.memory_id = m.id "
                    f"WHERE m.id IN ({','.join('?' * len(chunk))})"
                )
                out.update((int(r[0]), 1.0 - float(r[1])) for r in self.conn.execute(sql, (q, *chunk)))
        return out

    # -- maintenance (the compact job) ----------------------------------------------------------
    def vector_fill(self) -> tuple[int, int]:
        """``(live rows, slots)`` of the vec0 table (sqlite-vec never frees deleted slots); the
        orphans of bulk deletes are not live (the compact job purges them first)."""
        live = self.execute(f"SELECT COUNT(*) FROM {self.VEC_TABLE}_rowids").fetchone()[0] - self.removed_vectors()
        slots = self.execute(f"SELECT COALESCE(SUM(size), 0) FROM {self.VEC_TABLE}_chunks").fetchone()[0]
        return live, slots

    def rebuild_vectors(self, batches: BatchSizer | None = None, progress: Callable[[int], None] | None = None) -> int:
        """Free the vec0 slots that deletes left dead, in short write transactions; returns the rows moved.

        sqlite-vec never reuses a deleted slot, but frees a chunk once its last row is deleted. So
        the rows of every chunk with dead slots (except the newest of each partition, still filling)
        are moved: deleted and inserted again in one transaction per batch, which appends them to
        the newest chunk, and each emptied chunk is freed. ``batches`` bounds the batches (its
        size and time budget, in steps: ``jobs.batches.run_steps``; ``transaction()`` for each
        batch); ``progress(n)`` is called after each commit.
        Each batch re-reads its rows inside its transaction (a writer may have moved or deleted
        them meanwhile), so a run stopped anywhere leaves a valid table and the next run moves the
        rest. Same vectors and metadata: nothing is logged, in-process indexes stay valid."""
        t = self.VEC_TABLE
        if not self.table_exists(t):
            return 0
        with self.read() as c:
            newest = {r[0] for r in c.execute(f"SELECT MAX(chunk_id) FROM {t}_chunks GROUP BY partition00")}
            live = dict(c.execute(f"SELECT chunk_id, COUNT(*) FROM {t}_rowids GROUP BY chunk_id").fetchall())
            sparse = {
                int(ch)
                for ch, size in c.execute(f"SELECT chunk_id, size FROM {t}_chunks")
                if ch not in newest and live.get(ch, 0) < size
            }
            ids = [
                int(r[0])
                for r in c.execute(f"SELECT rowid, chunk_id FROM {t}_rowids ORDER BY chunk_id, chunk_offset")
                if r[1] in sparse
            ]
        columns = "memory_id, namespace, agent_id, scope, memory_type, archived, embedding"
        moved = k = 0
        while k < len(ids):
            with batches.transaction(self) if batches is not None else self.write() as c:

                def move(part: list[int]) -> int:
                    marks = ",".join("?" * len(part))
                    still = [
                        r[0]
                        for r in c.execute(f"SELECT rowid, chunk_id FROM {t}_rowids WHERE rowid IN ({marks})", part)
                        if r[1] in sparse
                    ]
                    rows = [c.execute(f"SELECT {columns} FROM {t} WHERE memory_id = ?", (i,)).fetchone() for i in still]
                    c.executemany(f"DELETE FROM {t} WHERE memory_id = ?", [(i,) for i in still])
                    c.executemany(f"INSERT INTO {t}({columns}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                    return len(still)

                k, n = _batch_step(batches, ids, k, move)
            moved += n
            if progress is not None and n:
                progress(n)
        return moved

    FTS_MERGE_PAGES = 128  # pages of FTS5 segment merging per write transaction (at most)
    FTS_AUTOMERGE = 4  # FTS5's default 'automerge'

    def _fts_automerge(self) -> int:
        """The keyword index's 'automerge' setting (FTS5's default when unset; 0 is read as unset:
        only a compaction stopped midway leaves it, see :meth:`optimize`)."""
        row = self.execute("SELECT v FROM memories_fts_config WHERE k = 'automerge'").fetchone()
        return int(row[0]) if row is not None and row[0] else self.FTS_AUTOMERGE

    def optimize(self, vacuum: bool = False, batches: BatchSizer | None = None) -> int:
        """Merge the FTS5 segments, ANALYZE, and with ``vacuum`` VACUUM when over a fifth of the file
        is free; 1 if vacuumed.

        The merge runs as many short transactions of incremental FTS5 'merge' work (a single
        'optimize' holds the write lock for the whole index; ``batches`` sizes them to its time
        budget and pauses between them), until a step changes nearly nothing; ANALYZE samples
        (``analysis_limit``) instead of reading whole indexes. VACUUM rewrites the file in one
        transaction: every writer waits for all of it."""
        # a full merge writes each page of the index about once: the steps stop after twice the
        # index's pages at the start (writers adding segments meanwhile would keep it going forever)
        budget = 2 * self.execute("SELECT COUNT(*) FROM memories_fts_data").fetchone()[0] + 1000
        merged = 0
        # FTS5's automatic merging off while the steps run (a setting of the table, for every
        # connection): an incremental merge in progress is what a writer's automatic merge continues
        # first, 64 leaf pages per level of the index each 64 leaves it writes, inside its own write
        # transaction; during the job's steps that was a merge of the whole index (measured at 100k
        # memories: one remember() in 64 took 200-290 ms of CPU, 0.8-1.3 s under load). Writers'
        # new segments still merge when a level holds 16 ('crisismerge'), small ones. Restored
        # after; a run stopped before that leaves 0, which the next run reads as FTS5's default.
        automerge = self._fts_automerge()
        self.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('automerge', 0)")
        try:
            while merged < budget:
                # pages merged per step: sized by ``batches`` (its time budget) when given
                pages = (
                    min(self.FTS_MERGE_PAGES, max(16, batches.size)) if batches is not None else self.FTS_MERGE_PAGES
                )
                with batches.transaction(self) if batches is not None else self.write() as c:
                    before = c.total_changes
                    # the first step sets up a merge of every segment (a negative count); the next
                    # ones continue it (positive: an incremental merge in progress is taken first,
                    # then any level of 'usermerge' segments). A negative count at every step put
                    # every segment into one merge again whenever a writer had added one meanwhile,
                    # the partly written output included: the merge restarted until the page budget
                    # ended it, leaving a merge of the whole index for writers to continue
                    c.execute(
                        "INSERT INTO memories_fts(memories_fts, rank) VALUES ('merge', ?)",
                        (pages if merged else -pages,),
                    )
                    if c.total_changes - before < 2:
                        break
                merged += pages
        finally:
            self.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('automerge', ?)", (automerge,))
        # ANALYZE one index (or index-less table) per statement, each its own short transaction: the
        # whole schema at once held the lock for all of them (memories alone has 17 indexes)
        self.execute("PRAGMA analysis_limit = 1000")
        schema = self.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        indexed = {t for kind, _, t, _ in schema if kind == "index"}
        for kind, name, _, sql in schema:
            index = kind == "index"
            plain = kind == "table" and not name.startswith("sqlite_") and not (sql or "").startswith("CREATE VIRTUAL")
            if index or (plain and name not in indexed):
                self.execute(f'ANALYZE "{name}"')
                time.sleep(0.002)  # a waiting writer takes the lock between two
        free, pages = (
            self.execute("PRAGMA freelist_count").fetchone()[0],
            self.execute("PRAGMA page_count").fetchone()[0],
        )
        if vacuum and pages and free / pages > 0.2:
            self.execute("VACUUM")
            return 1
        return 0

    def sqlalchemy_engine(self):
        return sqlalchemy_engine(self.path, busy_timeout_ms=self.busy_timeout_ms)


def sqlalchemy_engine(path: str | Path, *, busy_timeout_ms: int = 30_000):
    """A SQLAlchemy 2 engine (usable with SQLModel sessions) whose connections come from
    :func:`connect`: sqlean driver, sqlite-vec loaded, WAL. For dashboards, metrics views
    and ad-hoc SQL next to the store; the store itself does not go through it."""
    from sqlalchemy import create_engine

    return create_engine(
        "sqlite://", module=sqlean.dbapi2, creator=lambda: connect(path, busy_timeout_ms=busy_timeout_ms)
    )
