"""An in-process vector index over the vec0 table: the fast KNN path for large stores.

sqlite-vec's brute-force KNN costs ~80 ms at 100k float vectors on this hardware, so a
process recalling from a large store keeps a copy: sign-bit codes for a Hamming
pre-selection (popcount over 64-bit words) and the float32 vectors for an exact cosine
rerank. Filters (namespace, agent visibility, type, archived) are boolean masks applied
*before* the KNN, so a filtered search never returns fewer than k rows when k rows match.

The copy follows the database through the ``vector_changes`` log, which every vector
write appends to in the same transaction: each search first applies the changes made
since it last looked (by any process), so it is never stale.

**Persisted.** Loading a million vectors from vec0 takes many seconds, so the copy is also
kept in a sidecar file next to the database (``<db>-vecindex``): a header (dimensions, the
change-log sequence it is current to, the embedder record it was made under), the filter
columns, the codes, each vector rounded to int8 with a scale per row, and the float32 vectors.
A process opening a large store maps the file (the vectors stay in the page cache, shared
between processes), reads the filter columns and codes, and applies the changes logged since
the file's sequence. A search reranks the file's rows through their int8 copies and rescores in
float32 only those the int8 score's error bound cannot rule out (:meth:`VectorIndex._first_pass`:
the same answer as a float32 rerank), reading them with ``os.pread``: the float32 part of the
file is never mapped into a process that only recalls. The file is written (to a temporary name, fsynced, renamed) after a full
load from the database; rewriting it once the changes logged on top of it exceed a tenth of
its rows is the compact job's work (:meth:`VectorIndex.refresh_snapshot`), never a call's
that a caller waits for: at 100k memories a rewrite is 150 MB written and fsynced, and during
a bulk job every process that wrote or recalled used to rewrite it in turn (issue 17: the
worst writer waits). A file that is missing, unreadable, made under another embedder, or
older than the oldest change still logged is ignored (a full load from the database
replaces it).

**Small stores never load it.** Below :data:`SQL_EXACT_MAX_ROWS` stored memories, recall
asks SQLite for the exact answer (sqlite-vec's ``vec_distance_cosine`` over the rows that
pass the filters, see ``SQLiteBackend.vector_exact``), and numpy is not even imported:
this module imports numpy only when an index is first used. A long-lived process that has
spent :data:`SQL_EXACT_BUDGET_S` in that path loads the index (as a process that writes does).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mmap

    import numpy as np

__all__ = ["VectorIndex", "SQL_EXACT_BUDGET_S", "SQL_EXACT_MAX_ROWS", "sidecar_path"]

EXACT_LIMIT = 16_384  # below this many candidates, score all of them exactly
RERANK_MIN = 2048
# Hamming pre-selection keeps at least this share of the visible rows for the exact rerank: at a
# million memories a fixed 2,048 of ~370k visible rows lost exact neighbours (overlap@50 0.953;
# a 32nd gave 0.992, a 16th 0.998)
RERANK_SHARE = 16
# Below this many stored memories the exact SQL path answers the vector channel (measured:
# docs/benchmarks.md, issue 11; the SQL path costs 3-10 µs per visible row, the index a numpy
# import and a load, then ~1 ms per search)
SQL_EXACT_MAX_ROWS = 5_000
# ... until the process has spent this long in it: about what importing numpy and loading an index
# of that size costs, so a long-lived process pays at most twice the cheaper of the two
SQL_EXACT_BUDGET_S = 0.5
# A persisted index's vectors up to this size are read into memory (~0.1 s at 100k memories);
# larger ones stay mapped (the first searches fault their pages in from the page cache)
COPY_BASE_MAX_BYTES = 256 << 20
# A write's near-duplicate check (VectorIndex.near): above this many rows of its group, rows that
# cannot reach the threshold are dropped by their sign codes before any vector is read; the
# lower bound sorts the query's coordinates into this many weight classes; a slack on the bound
# for float32 rounding (the filter may keep a row it could drop, never the reverse)
NEAR_FILTER_MIN = 256
NEAR_WEIGHT_CLASSES = 8
NEAR_CLASSES_USED = 2  # the heaviest classes' bounds, then the exact weights of the rows left (measured fastest)
NEAR_SLACK = 1e-4
BEST_BOUND_BLOCK = 1 << 24  # (row, query) bounds best_in_group computes at once (64 MB of float32)
BEST_PAIRS_BLOCK = 1 << 19  # (query, row) pairs reaching the bound that best_in_group resolves at once (~20 MB)
BEST_PAIRS_SLICE = 4096  # (query, row) pairs whose vectors best_in_group gathers at once (6 MB at 384 dimensions)
# A write group's first coordinates and the norms of the rest, kept for the near-duplicate checks'
# bound (VectorIndex._near_heads): ~390 bytes a row, at most GROUP_HEADS_MAX_BYTES over all groups
# (100k memories: ~40 MB). 96 of 384 coordinates left ~18 of ~5,000 rows to read per check on
# benchmarks/latency.py's texts (64: ~260, 128: ~2, for a larger product)
NEAR_HEAD_DIMS = 96
GROUP_HEADS_MAX_BYTES = 64 << 20
NEAR_HEADS_AFTER = 16  # a single check builds its group's coordinates after this many in an unchanged index
VISIBLE_CACHE_KEYS = 64  # filters whose rows are kept (see VectorIndex._rows)
HIDDEN_CACHE_KEYS = 16  # filters whose rejected ids are kept (VectorIndex.hidden: a byte per id, 1 MB at 1M)
# A large filter's sign codes are kept contiguous for the Hamming pass (VectorIndex._filter_codes), up to
# this many bytes over all filters (100k memories, 8 agents: ~18 MB); past it a search gathers them
SEARCH_CODES_MAX_BYTES = 64 << 20
SNAPSHOT_MIN_ROWS = 20_000  # smaller indexes load from the database quickly: no sidecar file
# A persisted index's first pass (see VectorIndex.search): int8 rows with a scale each, whose score is
# within ``scale * sum|q_i| / 2`` of the float32 one (each coordinate rounded by at most half a step);
# the bound is taken a little wider (0.52) so float32 rounding in both products (~0.003 of the same
# quantity for 384 coordinates) never excludes a row that belongs to the exact top k
RESCORE_BOUND = 0.52
_MAGIC = b"HMVECIX3"  # 3: int8 rows and their scales beside the float32 ones (2 had the float32 ones only)
_ALIGN = 4096


def sidecar_path(db_path: str | os.PathLike) -> Path:
    """Where the persisted index of the database at ``db_path`` lives."""
    return Path(str(db_path) + "-vecindex")


class _Interner:
    def __init__(self, strings: Sequence[str] = ()) -> None:
        self.codes: dict[str, int] = {s: i for i, s in enumerate(strings)}

    def code(self, s: str) -> int:
        c = self.codes.get(s)
        if c is None:
            c = self.codes[s] = len(self.codes)
        return c

    def get(self, s: str) -> int:
        return self.codes.get(s, -1)

    def strings(self) -> list[str]:
        out = [""] * len(self.codes)
        for s, i in self.codes.items():
            out[i] = s
        return out


class _RowMap:
    """memory id -> row for an index read from a snapshot: the snapshot's rows are sorted by id
    (a binary search, instead of a dict of a million entries built at open); rows added or
    dropped since are kept apart. Answers like the dict it replaces (get, pop, in, [], []=)."""

    def __init__(self, base_ids: np.ndarray):
        self.base = base_ids
        self.extra: dict[int, int] = {}
        self.dropped: set[int] = set()

    def get(self, mid: int, default: int | None = None) -> int | None:
        r = self.extra.get(mid)
        if r is not None:
            return r
        if mid not in self.dropped:
            p = int(self.base.searchsorted(mid))
            if p < len(self.base) and self.base[p] == mid:
                return p
        return default

    def __contains__(self, mid: int) -> bool:
        return self.get(mid) is not None

    def many(self, mids: Sequence[int]) -> list[tuple[int, int]]:
        """``(id, row)`` of each of ``mids`` that has a row, in the order given: what ``get`` answers,
        with one binary search for them all (recall asks for ~50 ids at a time)."""
        import numpy as np

        if not len(self.base):
            return [(m, r) for m in mids if (r := self.extra.get(m)) is not None]
        arr = np.asarray(mids, dtype=np.int64)
        pos = self.base.searchsorted(arr)
        found = self.base[np.minimum(pos, len(self.base) - 1)] == arr
        out = []
        for m, p, f in zip(mids, pos.tolist(), found.tolist()):
            r = self.extra.get(m)
            if r is not None:
                out.append((m, r))
            elif f and m not in self.dropped:
                out.append((m, p))
        return out

    def __getitem__(self, mid: int) -> int:
        r = self.get(mid)
        if r is None:
            raise KeyError(mid)
        return r

    def __setitem__(self, mid: int, r: int) -> None:
        self.extra[mid] = r

    def pop(self, mid: int, default: int | None = None) -> int | None:
        r = self.get(mid)
        if r is None:
            return default
        self.extra.pop(mid, None)
        self.dropped.add(mid)
        return r


# the per-row arrays kept in memory (the vectors are apart: a mapped base plus an in-memory tail)
_META = ("ids", "codes", "ns", "agent", "is_global", "mtype", "archived", "alive")


class VectorIndex:
    """Constructing one is free (no numpy, no allocation): arrays appear on first use."""

    # per-row arrays (allocated by _alloc), the mapped base and its mapping
    ids: np.ndarray
    codes: np.ndarray
    ns: np.ndarray
    agent: np.ndarray
    is_global: np.ndarray
    mtype: np.ndarray
    archived: np.ndarray
    alive: np.ndarray
    vecs: np.ndarray
    base: np.ndarray
    _mm: mmap.mmap | None
    q8: np.ndarray | None  # the base rows' int8 vectors (n0, dim) and their scales (n0,), from a snapshot
    scale: np.ndarray | None
    _strings: _Interner

    def __init__(self, dimensions: int, path: str | os.PathLike | None = None):
        self.dim = dimensions
        self.words = (dimensions + 63) // 64
        self.path = None if path is None else Path(path)  # the sidecar; None: derived from the backend
        self.seq: int | None = None
        self._n = 0
        self._dead = 0
        self.cap = 0
        self.n0 = 0  # rows [0, n0) have their vectors in the mapped base file
        self.q8 = self.scale = None
        self._file: Any = None  # the snapshot file a mapped base is read from by os.pread (see _exact_rows)
        self._vecs_at = 0  # the offset of its float32 rows
        self._patched: np.ndarray | None = None  # base rows changed in this process (mapped copy-on-write)
        self.loaded = False
        self.since_snapshot = 0  # rows changed since the snapshot this index was read from (or written to)
        self.snapshot_seq: int | None = None  # the change-log sequence of that snapshot
        self._first_save_checked = False  # (see sync: the one save of an index that grew past the size)
        self.last_load = ""  # "snapshot" | "database": how the last full load happened (for benchmarks, tests)
        self.sql_below = SQL_EXACT_MAX_ROWS  # recall uses the exact SQL path below this many memories (unloaded)
        self._save_due = False  # a snapshot should be written at the next sync outside a write transaction
        self.sql_seconds = 0.0  # spent in that path by this process; past sql_budget it loads the index instead
        self.sql_budget = SQL_EXACT_BUDGET_S
        # rows passing a filter, per filter: (epoch, rows up to which it is current, the rows); the
        # epoch changes when an existing row's filter fields change or a row goes (an appended row
        # only extends an entry)
        self._epoch = 0
        self._visible: dict[tuple, tuple[int, int, np.ndarray]] = {}
        # the ids a filter cannot show, as a byte per memory id (see hidden): (epoch, rows, the bytes)
        self._hidden: dict[tuple, tuple[int, int, bytearray]] = {}
        # a write's group (namespace, agent, scope, type): its rows and their codes, contiguous and
        # grown in place (epoch, rows up to which it is current, count, rows, codes (words, capacity))
        self._groups: dict[tuple, list] = {}
        # a search filter's codes, contiguous: (count, codes (words, capacity)), see _filter_codes
        self._search_codes: dict[tuple, list] = {}
        # a write group's first NEAR_HEAD_DIMS coordinates and the norm of the rest, per row of
        # _group's rows, grown in place: (epoch, count, heads (capacity, h), tails (capacity,))
        self._heads: dict[tuple, list] = {}
        self._checks: dict[tuple, tuple[int, int]] = {}  # a group's single checks in this epoch: (epoch, count)

    # -- storage -----------------------------------------------------------------------------
    def _reset(self) -> None:
        import numpy as np

        self.seq = None
        self._strings = _Interner()
        self._row: dict[int, int] | _RowMap = {}
        self._n = 0
        self._dead = 0
        self.cap = 0
        self.n0 = 0
        self.base = np.zeros((0, self.dim), dtype=np.float32)
        self.q8 = self.scale = None
        self._patched = None
        self._mm = None
        if self._file is not None:
            self._file.close()
            self._file = None
        self._alloc(1024)
        self.loaded = True
        self._changed()

    def _alloc(self, cap: int) -> None:
        import numpy as np

        dtypes = {
            "ids": np.int64,
            "codes": np.uint64,
            "ns": np.int32,
            "agent": np.int32,
            "is_global": bool,
            "mtype": np.int32,
            "archived": bool,
            "alive": bool,
        }
        for name in _META:
            if name == "codes":  # one row per 64-bit word: the Hamming distance is summed word by word
                new = np.zeros((self.words, cap), dtype=dtypes[name])
                if self.cap:
                    new[:, : self._n] = self.codes[:, : self._n]
            else:
                new = np.zeros((cap,), dtype=dtypes[name])
                if self.cap:
                    new[: self._n] = getattr(self, name)[: self._n]
            setattr(self, name, new)
        tail = np.zeros((max(cap - self.n0, 0), self.dim), dtype=np.float32)
        if self.cap:
            tail[: self._n - self.n0] = self.vecs[: self._n - self.n0]
        self.vecs = tail  # rows [n0, cap): row r is vecs[r - n0]
        self.cap = cap

    def _gather(self, rows: np.ndarray, ascending: bool = False) -> np.ndarray:
        """The vectors of row positions ``rows`` (from the snapshot's base or the in-memory tail)."""
        import numpy as np

        if self.n0 == 0:
            return np.take(self.vecs, rows, axis=0)
        rows = np.asarray(rows)
        if ascending:  # base rows first: two contiguous takes
            k = int(rows.searchsorted(self.n0))
            if k == len(rows):
                return np.take(self.base, rows, axis=0)
            return np.concatenate(
                (np.take(self.base, rows[:k], axis=0), np.take(self.vecs, rows[k:] - self.n0, axis=0))
            )
        in_base = rows < self.n0
        if in_base.all():
            return np.take(self.base, rows, axis=0)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        b, t = np.flatnonzero(in_base), np.flatnonzero(~in_base)
        out[b] = np.take(self.base, rows[b], axis=0)
        out[t] = np.take(self.vecs, rows[t] - self.n0, axis=0)
        return out

    def _exact_rows(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of row positions ``rows`` (any order), as :meth:`_gather`; but a
        mapped base's rows are read with ``os.pread`` from the snapshot file (runs of consecutive
        rows in one read), so the pages they lie on are never mapped into this process: at a
        million rows the mapped float32 part was 1.55 GB of its resident memory. Rows this process
        changed since it mapped the file are taken from the mapping (its private copies)."""
        import numpy as np

        rows = np.asarray(rows, dtype=np.int64)
        if self._file is None or len(rows) == 0:
            return self._gather(rows)
        from_file = rows < self.n0
        if self._patched is not None:
            from_file[from_file] = ~self._patched[rows[from_file]]
        if not from_file.any():
            return self._gather(rows)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        if not from_file.all():
            other = np.flatnonzero(~from_file)
            out[other] = self._gather(rows[other])
        at = np.flatnonzero(from_file)
        at = at[np.argsort(rows[at], kind="stable")]
        wanted = rows[at]
        starts = np.flatnonzero(np.diff(wanted, prepend=-2) != 1)  # runs of consecutive rows
        ends = np.append(starts[1:], len(wanted))
        width = self.dim * 4
        fd = self._file.fileno()
        for a, b in zip(starts.tolist(), ends.tolist()):
            r = int(wanted[a])
            buf = os.pread(fd, width * (b - a), self._vecs_at + width * r)
            if len(buf) != width * (b - a):
                raise OSError(f"the vector index file {self.path} ended early")
            out[at[a:b]] = np.frombuffer(buf, dtype=np.float32).reshape(b - a, self.dim)
        return out

    def _patch(self, rows: np.ndarray, vecs: np.ndarray) -> None:
        """Base rows (of a snapshot) given new vectors in this process: the float32 and int8 rows
        of the mapping (copies on write) and the rows read from the mapping from now on."""
        import numpy as np

        self.base[rows] = vecs
        if self.q8 is not None and self.scale is not None:
            q8, scale = _quantize(vecs)
            self.q8[rows] = q8
            self.scale[rows] = scale
        if self._file is not None:
            if self._patched is None:
                self._patched = np.zeros(self.n0, dtype=bool)
            self._patched[rows] = True

    def __len__(self) -> int:
        return self._n - self._dead

    def _changed(self) -> None:
        self._epoch += 1
        self._visible.clear()
        self._hidden.clear()
        self._groups.clear()
        self._search_codes.clear()
        self._heads.clear()
        self._checks.clear()

    def _group(self, namespace: str, agent_id: str, scope: str, memory_type: str) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, codes)`` of a write's group, archived rows included: codes ``(words, len(rows))``."""
        import numpy as np

        key = (namespace, agent_id, scope, memory_type)
        g = self._groups.get(key)
        if g is None or g[0] != self._epoch:
            if len(self._groups) >= VISIBLE_CACHE_KEYS:
                self._groups.clear()
            g = self._groups[key] = [self._epoch, 0, 0, np.zeros(0, np.int64), np.zeros((self.words, 0), np.uint64)]
        if g[1] < self._n:
            start = g[1]
            new = np.flatnonzero(self._mask(namespace, agent_id, True, [memory_type], True, scope, start)) + start
            count = g[2] + len(new)
            if count > len(g[3]):
                cap = max(1024, 2 * count)
                rows = np.zeros(cap, np.int64)
                codes = np.zeros((self.words, cap), np.uint64)
                rows[: g[2]] = g[3][: g[2]]
                codes[:, : g[2]] = g[4][:, : g[2]]
                g[3], g[4] = rows, codes
            g[3][g[2] : count] = new
            g[4][:, g[2] : count] = self.codes[:, new]
            g[1], g[2] = self._n, count
        return g[3][: g[2]], g[4][:, : g[2]]

    def _code_of(self, v: np.ndarray) -> np.ndarray:
        import numpy as np

        bits = np.zeros(self.words * 64, dtype=bool)
        bits[: self.dim] = v > 0
        return np.packbits(bits).view(np.uint64)

    def put(
        self,
        memory_id: int,
        namespace: str,
        agent_id: str,
        scope: str,
        memory_type: str,
        archived: bool,
        vector: np.ndarray,
    ) -> None:
        import numpy as np

        if not self.loaded:
            self._reset()
        r = self._row.get(memory_id)
        if r is None:
            if self._n == self.cap:
                self._grow(1)
            r = self._n
            self._n += 1
            self._row[memory_id] = r
        else:
            self._changed()  # its filter fields may change
        self.ids[r] = memory_id
        if r < self.n0:  # a private copy of that page (the file is mapped copy-on-write)
            self._patch(np.asarray([r]), np.asarray(vector, dtype=np.float32)[None, :])
        else:
            self.vecs[r - self.n0] = vector
        self.codes[:, r] = self._code_of(vector)
        self.ns[r] = self._strings.code(namespace)
        self.agent[r] = self._strings.code(agent_id)
        self.is_global[r] = scope == "global"
        self.mtype[r] = self._strings.code(memory_type)
        self.archived[r] = bool(archived)
        self.alive[r] = True
        self.since_snapshot += 1

    def put_many(self, rows: Sequence[tuple]) -> None:
        """:meth:`put` for many ``(memory_id, namespace, agent_id, scope, memory_type, archived,
        vector)`` at once (a catch-up after a job's batch: thousands of rows archived or
        re-embedded), the codes computed and the arrays written as whole arrays (put's 60-70 us
        per row were most of a writer's wait behind the decay job, issue 17)."""
        import numpy as np

        if not rows:
            return
        _same_space(len(rows[0][6]), self.dim)
        if not self.loaded:
            self._reset()
        m = len(rows)
        new = sum(1 for row in rows if int(row[0]) not in self._row)
        if self._n + new > self.cap:
            self._grow(new)  # (before any position is taken: a compaction moves rows)
        pos = np.empty(m, dtype=np.int64)
        existing = False
        for k, row in enumerate(rows):
            mid = int(row[0])
            r = self._row.get(mid)
            if r is None:
                r = self._n
                self._n += 1
                self._row[mid] = r
            else:
                existing = True  # its filter fields may change
            pos[k] = r
        if existing:
            self._changed()
        vecs = np.asarray(np.stack([row[6] for row in rows]), dtype=np.float32)
        self.ids[pos] = [int(row[0]) for row in rows]
        in_base = pos < self.n0
        if in_base.any():
            self._patch(pos[in_base], vecs[in_base])  # private copies of those pages (copy-on-write)
        if not in_base.all():
            self.vecs[pos[~in_base] - self.n0] = vecs[~in_base]
        self.codes[:, pos] = _codes(vecs, self.words).T
        code = self._strings.code
        self.ns[pos] = [code(row[1]) for row in rows]
        self.agent[pos] = [code(row[2]) for row in rows]
        self.is_global[pos] = [row[3] == "global" for row in rows]
        self.mtype[pos] = [code(row[4]) for row in rows]
        self.archived[pos] = [bool(row[5]) for row in rows]
        self.alive[pos] = True
        self.since_snapshot += m

    def remove(self, memory_id: int) -> None:
        self.remove_many([memory_id])

    def remove_many(self, memory_ids: Sequence[int]) -> None:
        """Drop rows: dead, skipped by every search, until the arrays next need room
        (:meth:`_grow`). A removal never copies the arrays: it used to compact them at a quarter
        dead, every quarter again, and a writer catching up another process's clear paid a copy
        of most of a 100k index inside its call, each time (issue 17: over a second)."""
        if not self.loaded:
            return
        gone = 0
        for mid in memory_ids:
            r = self._row.pop(int(mid), None)
            if r is not None:
                self.alive[r] = False
                gone += 1
        if not gone:
            return
        self._changed()
        self._dead += gone
        self.since_snapshot += gone

    def _grow(self, need: int) -> None:
        """Room for ``need`` more rows: the dead rows compacted away when they are most of the
        arrays (a copy of the live rows, less than the doubling it replaces), otherwise the
        capacity doubled. (With a mapped base, the next snapshot drops the dead rows.)"""
        if self.n0 == 0 and self._dead > 1024 and self._dead > self._n // 2:
            self._compact()
        while self._n + need > self.cap:
            self._alloc(self.cap * 2)

    def _compact(self) -> None:
        import numpy as np

        keep = np.flatnonzero(self.alive[: self._n])
        for name in _META:
            arr = getattr(self, name)
            if name == "codes":
                arr[:, : len(keep)] = arr[:, keep]
            else:
                arr[: len(keep)] = arr[keep]
        self.vecs[: len(keep)] = self.vecs[keep]
        self._n = len(keep)
        self._dead = 0
        self._row = {int(i): r for r, i in enumerate(self.ids[: self._n])}
        self._changed()

    # -- synchronisation with the database -------------------------------------------------
    def sync(self, backend) -> None:
        """Apply the changes logged since the last sync (the first time: the persisted
        snapshot plus the changes since it, or a full load from the database).

        The snapshot is written after a full load from the database (or, when there is no file,
        once this index grew past the snapshot size), never inside a transaction
        (recall syncs inside its read snapshot, a write inside its write transaction): then
        :meth:`save_if_due` writes it after the transaction. Rewriting a snapshot that fell behind
        is :meth:`refresh_snapshot`'s (the compact job), not a caller's."""
        can_save = not backend.in_transaction
        ident: list | None
        if can_save and self.snapshot_seq is None and not self._first_save_checked and self.snapshot_stale:
            # grown past the snapshot size since a load that had none to write: written once, if no
            # process wrote one meanwhile (rewriting one that exists is refresh_snapshot's)
            self._first_save_checked = True
            path = self._sidecar(backend)
            self._save_due = path is not None and not path.exists()
        if self.seq is not None and not (can_save and self._save_due):
            # the common case, nothing logged since: one statement (a transaction costs three more)
            top = backend.execute("SELECT MAX(seq) FROM vector_changes").fetchone()[0] or 0
            if top == self.seq:
                return
        with backend.read():
            lo, hi = backend.vector_change_seq()
            if self.seq is not None and hi == self.seq and not (can_save and self._save_due):
                return
            if self.seq is None or (lo > self.seq + 1) or hi < self.seq:
                ident = _identity(backend)
                if not self._load_snapshot(backend, lo, hi, ident):
                    self._load_all(backend)
                    self.seq = hi
                    self.last_load = "database"
                    self._save_due = len(self) >= SNAPSHOT_MIN_ROWS
                else:
                    self.last_load = "snapshot"
                    self._save_due = False
            if self.seq is not None and self.seq != hi:
                self._apply_changes(backend, self.seq)
                self.seq = hi
            save = can_save and self._save_due
            ident = _identity(backend) if save else None
        if not save:
            return
        self._save_due = False
        if self.save(backend, ident) is not None and self.n0 == 0:
            # loaded from the database: read the file just written as any later process will (too
            # large to hold, it is mapped: the process keeps ~140 MB of its own at 1M rather than
            # 1.5 GB; otherwise read into memory with its int8 rows, for the int8 first pass)
            self.seq = None
            self.sync(backend)
            self.last_load = "database"

    @property
    def snapshot_stale(self) -> bool:
        """More than a tenth of the rows (and at least ``SNAPSHOT_MIN_ROWS``) changed since the
        snapshot this index was read from or wrote."""
        return len(self) >= SNAPSHOT_MIN_ROWS and self.since_snapshot > max(SNAPSHOT_MIN_ROWS, len(self) // 10)

    def refresh_snapshot(self, backend, trim_to: int | None = None) -> bool:
        """Rewrite the persisted snapshot if more than a tenth of its rows changed since it was
        written, or if it is older than ``trim_to`` (the change-log sequence up to which the log is
        about to be trimmed: it could no longer catch up); loads the index first (the snapshot plus
        the changes since); True if written.
        Called by the compact job, outside any transaction, before the change log is trimmed: a
        process opening the store later then catches up from a recent file instead of replaying
        (or, once the log is trimmed past the file, reloading) everything. Only for a store that
        has a snapshot (one never loaded, or below ``SNAPSHOT_MIN_ROWS``, has nothing to refresh).
        """
        path = self._sidecar(backend)
        if path is None or backend.in_transaction or not path.exists():
            return False
        self.sync(backend)  # (a full load from the database writes the file itself)
        behind = trim_to is not None and self.snapshot_seq is not None and self.snapshot_seq < trim_to
        if not (self.snapshot_stale or behind):
            return False
        return self.save(backend) is not None

    def caught_up(self, seq: int) -> None:
        """The caller applied (through :meth:`put`) every change logged up to ``seq``: its own write's."""
        self.seq = seq

    def save_if_due(self, backend) -> None:
        """Write the snapshot a sync inside a transaction could not (call outside transactions)."""
        if self.loaded and self._save_due and not backend.in_transaction:
            self.sync(backend)

    def _apply_changes(self, backend, since: int) -> None:
        # each changed memory once, in its state now: a deleted one (no vector) is removed, the
        # others put as a whole (the order between different memories does not matter)
        puts, gone = [], []
        for row in backend.iter_vectors(since_seq=since):
            if row[6] is None:
                gone.append(row[0])
            else:
                puts.append(row)
        self.remove_many(gone)
        self.put_many(puts)

    def _load_all(self, backend) -> None:
        """Bulk load, streamed: the vectors in batches straight into the arrays (a list of a
        million rows and their joined bytes made the peak 5 GB at 1M)."""
        import numpy as np

        self._reset()
        self.since_snapshot = 0
        # vec0 scans its metadata columns slowly (~1.6 s per 100k rows here): read only the
        # vectors from it, and the filter fields from the memories table (kept equal to vec0's).
        meta = {
            r[0]: r[1:]
            for r in backend.conn.execute("SELECT id, namespace, agent_id, scope, memory_type, archived FROM memories")
        }
        cap = 1024
        while cap < len(meta):
            cap *= 2
        self.cap = 0
        self._alloc(cap)
        code = self._strings.code
        cur = backend.conn.execute(f"SELECT memory_id, embedding FROM {backend.VEC_TABLE}")
        n = 0
        while batch := cur.fetchmany(65_536):
            batch = [r for r in batch if r[0] in meta]
            m = len(batch)
            if not m:
                continue
            while self.cap < n + m:
                self._n = n
                self._alloc(self.cap * 2)
            _same_space(len(batch[0][1]) // 4, self.dim)
            ids = [r[0] for r in batch]
            self.ids[n : n + m] = ids
            self.vecs[n : n + m] = np.frombuffer(b"".join(r[1] for r in batch), dtype=np.float32).reshape(m, self.dim)
            rows = [meta[i] for i in ids]
            self.ns[n : n + m] = [code(r[0]) for r in rows]
            self.agent[n : n + m] = [code(r[1]) for r in rows]
            self.is_global[n : n + m] = [r[2] == "global" for r in rows]
            self.mtype[n : n + m] = [code(r[3]) for r in rows]
            self.archived[n : n + m] = [bool(r[4]) for r in rows]
            n += m
        self.codes[:, :n] = _codes(self.vecs[:n], self.words).T
        self.alive[:n] = True
        self._n = n
        self._row = dict(zip(self.ids[:n].tolist(), range(n)))

    # -- the persisted snapshot --------------------------------------------------------------
    def _sidecar(self, backend) -> Path | None:
        if self.path is not None:
            return self.path
        p = getattr(backend, "path", None)
        if p is None or str(p) in (":memory:", "", os.devnull):
            return None
        return sidecar_path(p)

    def _load_snapshot(self, backend, lo: int, hi: int, ident: list) -> bool:
        """Map the sidecar if it is current enough to catch up from the change log."""
        path = self._sidecar(backend)
        if path is None:
            return False
        try:
            f = open(path, "rb")  # (kept open for os.pread when the file stays mapped: see _map_snapshot)
        except OSError:  # missing or unreadable: load from the database
            return False
        try:
            got = self._map_snapshot(f, lo, hi, ident)
        finally:
            if self._file is not f:
                f.close()
        return got

    def _map_snapshot(self, f, lo: int, hi: int, ident: list) -> bool:
        import mmap

        import numpy as np

        try:
            head = f.read(16)
            if len(head) < 16 or head[:8] != _MAGIC:
                return False  # (also a file of an older format: rebuilt from the database)
            size = int.from_bytes(head[8:16], "little")
            header = json.loads(f.read(size))
            if (
                header.get("dim") != self.dim
                or header.get("identity") != ident
                or not isinstance(header.get("seq"), int)
            ):
                return False
            seq = header["seq"]
            if seq > hi or (hi > seq and lo > seq + 1):
                return False  # the file is ahead of this database, or changes it lacks are no longer logged
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        except (OSError, ValueError, UnicodeDecodeError):  # unreadable or torn: load from the database
            return False
        n = int(header["n"])
        arrays = {}
        try:
            for name, (offset, dtype, shape) in header["arrays"].items():
                count = int(np.prod(shape))
                arrays[name] = np.frombuffer(mm, dtype=np.dtype(dtype), count=count, offset=offset).reshape(shape)
            ids = arrays["ids"]
            if len(ids) > 1 and not bool((ids[1:] > ids[:-1]).all()):
                return False  # rows must be sorted by id (how they are found)
            if arrays["vecs"].shape != (n, self.dim) or arrays["q8"].shape != (n, self.dim):
                return False
            vecs_at = int(header["arrays"]["vecs"][0])
        except (ValueError, TypeError, KeyError):
            return False
        self._reset()
        self._strings = _Interner(header["strings"])
        self.n0 = n
        if arrays["vecs"].nbytes <= COPY_BASE_MAX_BYTES:  # small enough to hold: no page faults in searches
            # (the mapping goes with this function's references). The int8 rows are held too (a quarter
            # of the float32 bytes: 41 MB at 100k memories): the rerank's gather of ~2,600 scattered
            # float32 rows was most of a search there, its int8 first pass reads a quarter of the bytes
            # and rescores ~100 rows (docs/benchmarks.md, issue 11's seventh round)
            self.base = np.array(arrays["vecs"])
            self.q8, self.scale = np.array(arrays["q8"]), np.array(arrays["scale"])
        else:
            # searches read scattered int8 rows: no read-ahead or fault-around (each fault mapped 64 KB,
            # the first recall at 1M read ~0.7 GB and every page of the file became resident); the
            # float32 rows a search rescores are read with os.pread, never through the mapping
            if hasattr(mm, "madvise") and hasattr(mmap, "MADV_RANDOM"):
                mm.madvise(mmap.MADV_RANDOM)
            self._mm = mm
            self.base = arrays["vecs"]
            self.q8, self.scale = arrays["q8"], arrays["scale"]
            if hasattr(os, "pread"):  # (elsewhere the rows are read through the mapping)
                self._file, self._vecs_at = f, vecs_at
        self.cap = 0
        self._n = 0
        cap = 1024
        while cap < n + 1024:
            cap *= 2
        self._alloc(cap)
        for name in ("ids", "ns", "agent", "mtype"):
            getattr(self, name)[:n] = arrays[name]
        self.codes[:, :n] = arrays["codes"]
        flags = arrays["flags"]
        self.is_global[:n] = (flags & 1) != 0
        self.archived[:n] = (flags & 2) != 0
        self.alive[:n] = True
        self._n = n
        self._row = _RowMap(np.array(arrays["ids"]))  # (sorted by id when written)
        self.seq = seq
        self.since_snapshot = 0
        self.snapshot_seq = seq
        return True

    def save(self, backend, ident: list | None = None) -> Path | None:
        """Write the live rows to the sidecar (a temporary file, fsynced, then renamed over it).

        Another process saving at the same time keeps its own temporary file; the last rename
        wins and both files are complete. Returns the path, or None when there is nowhere to
        write (an in-memory database, a read-only folder)."""
        import numpy as np

        path = self._sidecar(backend)
        if path is None or not self.loaded or self.seq is None:
            return None
        if ident is None:
            ident = _identity(backend)
        keep = np.flatnonzero(self.alive[: self._n])
        keep = keep[np.argsort(self.ids[keep], kind="stable")]  # by id: a reader finds rows by binary search
        n = len(keep)
        flags = self.is_global[keep].astype(np.uint8) | (self.archived[keep].astype(np.uint8) << 1)
        plan: list[tuple[str, np.dtype, tuple[int, ...]]] = [
            ("ids", np.dtype(np.int64), (n,)),
            ("ns", np.dtype(np.int32), (n,)),
            ("agent", np.dtype(np.int32), (n,)),
            ("mtype", np.dtype(np.int32), (n,)),
            ("flags", np.dtype(np.uint8), (n,)),
            ("codes", np.dtype(np.uint64), (self.words, n)),
            ("scale", np.dtype(np.float32), (n,)),
            ("q8", np.dtype(np.int8), (n, self.dim)),
            ("vecs", np.dtype(np.float32), (n, self.dim)),
        ]
        header: dict[str, Any] = {
            "dim": self.dim,
            "n": n,
            "seq": self.seq,
            "identity": ident,
            "strings": self._strings.strings(),
            "arrays": {},
        }
        # offsets depend on the header's size, which depends on the offsets' digits: pad generously
        head_room = len(json.dumps(header).encode()) + 64 * len(plan) + 64
        offset = _round_up(16 + head_room, _ALIGN)
        for name, dtype, shape in plan:
            header["arrays"][name] = [offset, dtype.str, list(shape)]
            offset = _round_up(offset + dtype.itemsize * int(np.prod(shape)), _ALIGN)
        blob = json.dumps(header).encode()
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}-{id(self)}")
        try:
            with open(tmp, "wb") as f:
                f.write(_MAGIC + len(blob).to_bytes(8, "little") + blob)
                for name, _dtype, _shape in plan:
                    if name in ("q8", "scale"):
                        continue  # (written beside the float32 rows, below)
                    f.seek(header["arrays"][name][0])
                    if name == "vecs":
                        # each chunk of rows read once (a mapped base by pread: its pages stay unmapped),
                        # its float32 rows, int8 rows and scales each written at their place
                        places = [
                            (header["arrays"][x][0], w)
                            for x, w in (("vecs", self.dim * 4), ("q8", self.dim), ("scale", 4))
                        ]
                        for s in range(0, n, 65_536):
                            chunk = np.ascontiguousarray(self._exact_rows(keep[s : s + 65_536]))
                            for (at, width), part in zip(places, (chunk, *_quantize(chunk))):
                                f.seek(at + s * width)
                                f.write(part.tobytes())
                    elif name == "flags":
                        f.write(flags.tobytes())
                    elif name == "codes":
                        f.write(np.ascontiguousarray(self.codes[:, keep]).tobytes())
                    else:
                        f.write(np.ascontiguousarray(getattr(self, name)[keep]).tobytes())
                f.truncate(offset)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError:  # a read-only or full folder: the index still works, only unpersisted
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass  # nothing more to clean up where nothing could be written
            return None
        self.since_snapshot = 0
        self.snapshot_seq = self.seq
        return path

    # -- search ----------------------------------------------------------------------------
    def _mask(
        self,
        namespace: str,
        agent_id: str | None,
        include_global: bool,
        types: Sequence[str] | None,
        include_archived: bool,
        scope: str | None = None,
        start: int = 0,
    ) -> np.ndarray:
        """Which of rows ``[start, n)`` pass the filters."""
        import numpy as np

        n = self._n
        sl = slice(start, n)
        m = self.alive[sl] & (self.ns[sl] == self._strings.get(namespace))
        if not include_archived:
            m &= ~self.archived[sl]
        a = self._strings.get(agent_id) if agent_id is not None else -2
        own = (self.agent[sl] == a) if agent_id is not None else np.zeros(n - start, bool)
        if scope == "agent":
            m &= own & ~self.is_global[sl]
        elif scope == "global":
            m &= self.is_global[sl] & (own if agent_id is not None else True)
        else:
            # with no agent the SQL visibility is the global memories, whatever include_global says
            m &= (own | self.is_global[sl]) if include_global or agent_id is None else own
        if types is not None:
            mt = self.mtype[sl]
            any_type = np.zeros(n - start, bool)
            for t in types:
                any_type |= mt == self._strings.get(t)
            m &= any_type
        return m

    def _rows(
        self,
        namespace: str,
        agent_id: str | None,
        include_global: bool,
        types: Sequence[str] | None,
        include_archived: bool,
        scope: str | None = None,
    ) -> np.ndarray:
        """Row positions passing the filters, ascending; kept per filter and extended by the rows
        appended since (the caller must not modify the array)."""
        import numpy as np

        key = _filter_key(namespace, agent_id, include_global, types, include_archived, scope)
        got = self._visible.get(key)
        if got is not None and got[0] == self._epoch and got[1] == self._n:
            return got[2]
        if got is not None and got[0] == self._epoch:
            start = got[1]
            new = np.flatnonzero(self._mask(namespace, agent_id, include_global, types, include_archived, scope, start))
            rows = np.concatenate((got[2], new + start)) if len(new) else got[2]
        else:
            rows = np.flatnonzero(self._mask(namespace, agent_id, include_global, types, include_archived, scope))
            if len(self._visible) >= VISIBLE_CACHE_KEYS:
                self._visible.clear()
        self._visible[key] = (self._epoch, self._n, rows)
        return rows

    def hidden(
        self,
        namespace: str,
        agent_id: str | None,
        include_global: bool,
        types: Sequence[str] | None,
        include_archived: bool,
    ) -> bytearray:
        """A byte per memory id: 1 for a memory this index holds (a live row) that the filters
        reject, 0 for the others (those it passes, those it does not hold: no vector, or written
        since it was synced; an id past the end is one of these). The keyword channel's prefilter
        (``SQLiteBackend.keyword_search``): a memory marked 1 is not visible to a recall with these
        filters, so BM25 need not score it. The filter fields are kept equal to the database's by the
        change log, as the vector channel's are; kept per filter like :meth:`_rows` (extended by the
        rows appended since, rebuilt when the epoch changes)."""
        import numpy as np

        key = _filter_key(namespace, agent_id, include_global, types, include_archived, None)
        got = self._hidden.get(key)
        if got is not None and got[0] == self._epoch and got[1] == self._n:
            return got[2]
        start = got[1] if got is not None and got[0] == self._epoch else 0
        n = self._n
        reject = self.alive[start:n] & ~self._mask(
            namespace, agent_id, include_global, types, include_archived, None, start
        )
        ids = self.ids[start:n][reject]
        if got is None or start == 0:
            arr = np.zeros(int(self.ids[:n].max()) + 1 if n else 0, dtype=np.uint8)
            arr[ids] = 1
            marks = bytearray(arr.tobytes())
            if len(self._hidden) >= HIDDEN_CACHE_KEYS:
                self._hidden.clear()
        else:
            marks = got[2]
            if len(ids):
                top = int(ids.max()) + 1
                if top > len(marks):
                    marks.extend(bytes(top - len(marks)))
                for i in ids.tolist():
                    marks[i] = 1
        self._hidden[key] = (self._epoch, n, marks)
        return marks

    def _filter_codes(self, key: tuple, rows: np.ndarray) -> np.ndarray | None:
        """The codes of a filter's ``rows`` (from :meth:`_rows`) contiguous, ``(words, len(rows))``: the
        Hamming pass then reads them in order instead of gathering them from the whole index. Kept
        per filter and extended by the rows appended since (within an epoch a filter's rows only
        grow at the end); None when keeping them would pass SEARCH_CODES_MAX_BYTES."""
        import numpy as np

        n = len(rows)
        g = self._search_codes.get(key)
        if g is None or g[0] > n:
            g = None
            need = self.words * 8 * (n + n // 4)
            used = sum(x[1].nbytes for x in self._search_codes.values())
            if used + need > SEARCH_CODES_MAX_BYTES:
                return None
            g = self._search_codes[key] = [0, np.zeros((self.words, n + n // 4), np.uint64)]
        count, codes = g
        if count < n:
            if n > codes.shape[1]:
                grown = np.zeros((self.words, n + n // 4), np.uint64)
                grown[:, :count] = codes[:, :count]
                codes = g[1] = grown
            new = rows[count:n]
            for w in range(self.words):
                codes[w, count:n] = self.codes[w][new]
            g[0] = n
        return codes[:, :n]

    def candidates(
        self,
        *,
        namespace: str,
        agent_id: str | None,
        scope: str | None = None,
        types: Sequence[str] | None = None,
        include_global: bool = True,
        include_archived: bool = False,
    ) -> np.ndarray:
        """Row positions passing the filters."""
        import numpy as np

        if not self.loaded:
            return np.zeros(0, dtype=np.int64)
        return self._rows(namespace, agent_id, include_global, types, include_archived, scope)

    def best_in_group(
        self,
        namespace: str,
        agent_id: str,
        scope: str,
        memory_type: str,
        queries: np.ndarray,
        min_sim: float,
        exclude: set[int] | frozenset[int] = frozenset(),
    ) -> list[tuple[int, float] | None]:
        """For each query, the most similar row of a write's group if its cosine reaches
        ``min_sim``, else None (a batch's near-duplicate check, where only such rows decide
        anything; ``exclude``: memory ids never merged into). Exact: through the group's kept
        coordinates (:meth:`_near_heads`), or one product with every row of the group when they
        cannot be kept."""
        import numpy as np

        out: list[tuple[int, float] | None] = [None] * len(queries)
        if not self.loaded or len(queries) == 0:
            return out
        key = (namespace, agent_id, scope, memory_type)
        rows, _ = self._group(*key)
        if len(rows) == 0:
            return out
        qs = np.asarray(queries, dtype=np.float32)
        skip = (
            np.isin(self.ids[rows], np.fromiter(exclude, dtype=np.int64, count=len(exclude)))
            if exclude
            else np.zeros(len(rows), dtype=bool)
        )
        kept = self._group_heads(key, rows, build=True)
        if kept is not None:  # the bound of every pair in one product (see _near_heads), then each query's candidates
            # queries in blocks, so memory stays bounded whatever the batch, the group and the threshold: the
            # bound for BEST_BOUND_BLOCK (row, query) pairs at once (a few products over the group's heads,
            # not one per query), and the pairs it keeps resolved BEST_PAIRS_BLOCK at a time (a whole batch's
            # took 36 bytes a kept pair: 1,000 items into a group of 10,000 rows at threshold 0.5, 440 MB)
            step = max(1, BEST_BOUND_BLOCK // len(rows))
            for q0 in range(0, len(qs), step):
                reach = kept @ _bound_query(qs[q0 : q0 + step], kept.shape[1] - 1).T >= float(min_sim) - NEAR_SLACK
                if exclude:
                    reach &= ~skip[:, None]
                n = int(np.count_nonzero(reach))
                if n == 0:
                    continue
                width = reach.shape[1]
                sub = width if n <= BEST_PAIRS_BLOCK else max(1, width * BEST_PAIRS_BLOCK // n)
                for c0 in range(0, width, sub):
                    self._best_pairs(rows, reach[:, c0 : c0 + sub], qs[q0 + c0 : q0 + c0 + sub], q0 + c0, min_sim, out)
            return out
        vecs = self._gather(rows)
        for start in range(0, len(qs), 256):
            sims = vecs @ qs[start : start + 256].T
            sims[skip] = -np.inf
            best = sims.argmax(axis=0)
            for j, b in enumerate(best.tolist()):
                if sims[b, j] >= min_sim:
                    out[start + j] = (int(self.ids[rows[b]]), float(sims[b, j]))
        return out

    def _best_pairs(
        self,
        rows: np.ndarray,
        reach: np.ndarray,
        qs: np.ndarray,
        q0: int,
        min_sim: float,
        out: list[tuple[int, float] | None],
    ) -> None:
        """:meth:`best_in_group` for the queries ``qs`` (``out[q0:]``), given which (row, query) pairs reach
        the bound (``reach``, rows by queries)."""
        import numpy as np

        # every (query, row) pair the bound keeps, query by query and rows ascending within one
        # (a batch of 1,000 reads ~20 rows a query: one gather and product for all of them, in
        # slices, instead of a gather and a product per query)
        ri, qi = np.nonzero(reach)  # (of the array as laid out: its transpose's took 25 ms a batch)
        if len(qi) == 0:
            return
        order = np.argsort(qi, kind="stable")
        qi, ri = qi[order], ri[order]
        cand = rows[ri]
        sims = np.empty(len(qi), dtype=np.float32)
        for a in range(0, len(qi), BEST_PAIRS_SLICE):
            b = a + BEST_PAIRS_SLICE
            sims[a:b] = np.einsum("ij,ij->i", self._gather(cand[a:b]), qs[qi[a:b]])
        starts = np.flatnonzero(np.r_[True, qi[1:] != qi[:-1]])
        top = np.maximum.reduceat(sims, starts)
        # the first pair of each query reaching its best (the smallest row position, as argmax)
        first = np.flatnonzero(sims == np.repeat(top, np.diff(np.r_[starts, len(qi)])))
        seg, at = np.unique(qi[first], return_index=True)
        for j, p in zip(seg.tolist(), first[at].tolist()):
            if sims[p] >= min_sim:
                out[q0 + j] = (int(self.ids[cand[p]]), float(sims[p]))

    def near_in_group(
        self, namespace: str, agent_id: str, scope: str, memory_type: str, query: np.ndarray, min_sim: float
    ) -> list[tuple[int, float]]:
        """:meth:`near` over a write's group (its rows and codes kept between writes); through the
        group's kept coordinates (:meth:`_near_heads`) once ``NEAR_HEADS_AFTER`` checks of the group
        found the index unchanged (a store whose rows keep changing is checked by the codes, which
        cost nothing to rebuild)."""
        import numpy as np

        if not self.loaded:
            return []
        key = (namespace, agent_id, scope, memory_type)
        rows, codes = self._group(*key)
        seen = self._checks.get(key)
        n = seen[1] + 1 if seen is not None and seen[0] == self._epoch else 1
        self._checks[key] = (self._epoch, n)
        kept = self._group_heads(key, rows, build=n >= NEAR_HEADS_AFTER, evict=False)
        if kept is None:
            return self.near(rows, query, min_sim, codes)
        return self._near_heads(rows, kept, np.asarray(query, dtype=np.float32), min_sim)

    def _near_heads(
        self,
        rows: np.ndarray,
        kept: np.ndarray,
        q: np.ndarray,
        min_sim: float,
        skip: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        """``(memory_id, cosine)`` of every row of ``rows`` (a group's, ``kept`` its coordinates)
        whose cosine with ``q`` reaches ``min_sim``, best first; rows where ``skip`` is set left out.
        Cauchy-Schwarz bounds each cosine by the product of the first ``NEAR_HEAD_DIMS``
        coordinates plus the product of the norms of the rest, ``q.v <= q_h.v_h + |q_t| |v_t|``;
        only the rows whose bound reaches ``min_sim`` have their vectors read."""
        import numpy as np

        h = kept.shape[1] - 1
        bound = kept @ _bound_query(q[None, :], h)[0]
        reach = bound >= float(min_sim) - NEAR_SLACK
        if skip is not None:
            reach &= ~skip
        cand = rows[np.flatnonzero(reach)]
        if len(cand) == 0:
            return []
        sims = np.einsum("ij,j->i", self._gather(cand), q)
        hit = np.flatnonzero(sims >= min_sim)
        order = hit[np.argsort(-sims[hit], kind="stable")]
        return [(int(self.ids[cand[o]]), float(sims[o])) for o in order]

    def _group_heads(self, key: tuple, rows: np.ndarray, build: bool, evict: bool = True) -> np.ndarray | None:
        """A group's ``rows`` (``_group``'s, which only grow within an epoch) as ``(len(rows), h + 1)``:
        the first ``h = NEAR_HEAD_DIMS`` coordinates of each row and, last, the norm of its other
        ones (so a query's bound of every row is one product with ``[q_h, |q_t|]``), kept and
        extended by the rows added since. None when not kept and ``build`` is false, or when they
        would take more than ``GROUP_HEADS_MAX_BYTES`` over all groups: with ``evict`` the other
        groups' are dropped first (a batch: its items pay for one build), without it nothing is
        (single writes into groups that do not fit together would each rebuild theirs)."""
        import numpy as np

        h = min(NEAR_HEAD_DIMS, self.dim)
        g = self._heads.get(key)
        if g is None or g[0] != self._epoch or g[1] > len(rows):
            self._heads.pop(key, None)
            if not build:
                return None
            g = [self._epoch, 0, np.zeros((0, h + 1), np.float32)]
        if len(rows) > len(g[2]):
            cap = max(1024, len(rows) + len(rows) // 4)
            need = cap * (h + 1) * 4
            if need > GROUP_HEADS_MAX_BYTES:
                self._heads.pop(key, None)
                return None
            held = sum(x[2].nbytes for k, x in self._heads.items() if k != key)
            if held + need > GROUP_HEADS_MAX_BYTES:
                if not evict:
                    self._heads.pop(key, None)
                    return None
                self._heads = {key: g} if key in self._heads else {}
            fused = np.zeros((cap, h + 1), np.float32)
            fused[: g[1]] = g[2][: g[1]]
            g[2] = fused
        if g[1] < len(rows):
            new = self._gather(rows[g[1] :])
            g[2][g[1] : len(rows), :h] = new[:, :h]
            g[2][g[1] : len(rows), h] = np.sqrt(np.einsum("ij,ij->i", new[:, h:], new[:, h:]))
            g[1] = len(rows)
        self._heads[key] = g
        return g[2][: len(rows)]

    def near(
        self, rows: np.ndarray, query: np.ndarray, min_sim: float, codes: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """``(memory_id, cosine)`` of every row of ``rows`` whose cosine with ``query`` reaches
        ``min_sim``, best first: exact (a write's near-duplicate check), without reading the
        vectors of rows that cannot reach it.

        The sign codes bound the cosine from above. Where a row's sign bit differs from the
        query's at coordinate i, ``|q_i - v_i| >= |q_i|``; so for unit vectors the query's weight
        ``q_i**2`` summed over the differing coordinates is at most ``|q - v|**2 = 2 - 2 cos``.
        A row whose differing coordinates weigh more than ``2 (1 - min_sim)`` cannot reach
        ``min_sim``. First a lower bound of that weight from popcounts per weight class (the
        ``d`` differing coordinates of a class weigh at least its ``d`` lightest), then the
        exact weight through a byte table for the rows left, then the cosine of the few left."""
        import numpy as np

        q = np.ascontiguousarray(query, dtype=np.float32)
        if len(rows) == 0 or not q.any():
            return []
        bound = 2.0 * (1.0 - float(min_sim)) + NEAR_SLACK
        if len(rows) > NEAR_FILTER_MIN and bound < 2.0:
            w = np.zeros(self.words * 64, dtype=np.float64)
            w[: self.dim] = q.astype(np.float64) ** 2
            qc = self._code_of(q)
            if codes is None:  # (the codes of ``rows``, if the caller has them: no gather)
                diff = [self.codes[k][rows] ^ qc[k] for k in range(self.words)]
            else:
                diff = [codes[k] ^ qc[k] for k in range(self.words)]
            nz = np.flatnonzero(w)
            order = nz[np.argsort(-w[nz], kind="stable")]  # heaviest first: those classes drop the most rows
            low = np.zeros(len(rows), dtype=np.float64)
            parts = [p for p in np.array_split(order, NEAR_WEIGHT_CLASSES) if len(p)][:NEAR_CLASSES_USED]
            for part in parts:
                bits = np.zeros(self.words * 64, dtype=bool)
                bits[part] = True
                mask = np.packbits(bits).view(np.uint64)
                d = np.zeros(len(rows), dtype=np.uint16)
                for k in np.flatnonzero(mask).tolist():
                    d += np.bitwise_count(diff[k] & mask[k])
                low += np.concatenate(([0.0], np.cumsum(w[part][::-1])))[d]  # the d lightest of the class
                keep = low <= bound  # drop the rows already out of reach
                if not keep.all():
                    rows, low = rows[keep], low[keep]
                    diff = [x[keep] for x in diff]
                    if len(rows) == 0:
                        return []
            if len(rows) > NEAR_FILTER_MIN // 8:
                # the exact weight: one table of 256 sums per byte of the code (packbits: MSB first)
                table = w.reshape(-1, 8) @ _byte_bits().T
                b = np.stack(diff, axis=1).view(np.uint8)  # (rows, bytes), in code order
                exact = np.take(table.ravel(), b.astype(np.intp) + 256 * np.arange(b.shape[1])).sum(axis=1)
                rows = rows[exact <= bound]
            if len(rows) == 0:
                return []
        rows = np.sort(rows)
        sims = np.einsum("ij,j->i", self._gather(rows, ascending=True), q)
        hit = np.flatnonzero(sims >= min_sim)
        order = hit[np.argsort(-sims[hit], kind="stable")]
        return [(int(self.ids[rows[o]]), float(sims[o])) for o in order]

    def search(
        self,
        query: np.ndarray,
        *,
        namespace: str,
        agent_id: str | None,
        include_global: bool = True,
        types: Sequence[str] | None = None,
        include_archived: bool = False,
        k: int = 10,
        scope: str | None = None,
    ) -> list[tuple[int, float]]:
        """``(memory_id, cosine)`` of the k nearest visible vectors, best first."""
        import numpy as np

        if k <= 0 or self._n == 0:
            return []
        idx = self._rows(namespace, agent_id, include_global, types, include_archived, scope)
        if len(idx) == 0:
            return []
        q = np.ascontiguousarray(query, dtype=np.float32)
        if len(idx) > EXACT_LIMIT:
            qc = self._code_of(q)
            codes = self._filter_codes(
                _filter_key(namespace, agent_id, include_global, types, include_archived, scope), idx
            )
            if codes is None:
                ham = np.bitwise_count(self.codes[0][idx] ^ qc[0]).astype(np.uint16)
                for w in range(1, self.words):
                    ham += np.bitwise_count(self.codes[w][idx] ^ qc[w])
            else:
                ham = np.bitwise_count(codes[0] ^ qc[0]).astype(np.uint16)
                for w in range(1, self.words):
                    ham += np.bitwise_count(codes[w] ^ qc[w])
            c = min(len(idx), max(RERANK_MIN, 16 * k, len(idx) // RERANK_SHARE))
            # every row within the distance of the c-th nearest (all of its ties: no arbitrary pick
            # among equal distances), in ascending row order (the mapped file in order); a histogram
            # of the distances finds it without a partition of them
            t = int(np.searchsorted(np.cumsum(np.bincount(ham, minlength=self.words * 64 + 1)), c))
            idx = idx[ham <= t]
        if self.q8 is not None and len(idx) > k and self.n0 > 0:
            idx, sims = self._first_pass(idx, q, k)
        else:
            # einsum, not a BLAS product: OpenBLAS's threads cost milliseconds on a busy machine for this size
            sims = np.einsum("ij,j->i", self._gather(idx, ascending=True), q)
        if len(idx) > k:
            part = np.argpartition(-sims, k - 1)[:k]
            idx, sims = idx[part], sims[part]
        order = np.argsort(-sims, kind="stable")
        return [(int(self.ids[idx[o]]), float(sims[o])) for o in order]

    def _first_pass(self, idx: np.ndarray, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``idx`` (ascending) that can be among the k nearest, with their float32
        cosines: the same k nearest as scoring every row of ``idx`` in float32, reading far less.

        A snapshot's base rows are scored first through their int8 copies (a quarter of the bytes;
        the float32 file is not touched): each such score is within ``b = scale * sum|q_i| / 2`` of
        the float32 one (:data:`RESCORE_BOUND`). The k-th largest lower bound ``score - b`` is at
        most the k-th largest float32 score, so a row whose upper bound ``score + b`` falls below it
        cannot be among the k nearest; the rows left (~100 of ~3,000 at 100k memories, k=50) are
        scored in float32 (:meth:`_exact_rows`). The other rows (added since the snapshot) are
        held in float32 and scored exactly at once."""
        import numpy as np

        weight = float(np.abs(q).sum())
        if weight == 0.0:  # a query without any weight: every cosine is 0 (nothing to rule out by a bound)
            return idx[:k], np.zeros(min(k, len(idx)), dtype=np.float32)
        b = int(idx.searchsorted(self.n0))  # idx[:b] are base rows
        assert self.q8 is not None and self.scale is not None
        approx = np.empty(len(idx), dtype=np.float32)
        bound = np.zeros(len(idx), dtype=np.float32)
        if b:
            scale = self.scale[idx[:b]]
            # (einsum casts the int8 rows in its buffers: a float32 copy of them cost 3x the product)
            rows8 = np.take(self.q8, idx[:b], axis=0)
            approx[:b] = np.einsum("ij,j->i", rows8, q, dtype=np.float32, casting="unsafe") * scale
            bound[:b] = scale * np.float32(RESCORE_BOUND * weight)
        if b < len(idx):
            approx[b:] = np.einsum("ij,j->i", np.take(self.vecs, idx[b:] - self.n0, axis=0), q)
        cut = np.partition(approx - bound, len(idx) - k)[len(idx) - k]  # the k-th largest lower bound
        keep = np.flatnonzero(approx + bound >= cut)
        sims = approx[keep]
        base = keep[keep < b]
        if len(base):
            sims[: len(base)] = np.einsum("ij,j->i", self._exact_rows(idx[base]), q)
        return idx[keep], sims

    def similarities(self, memory_ids: Sequence[int], query: np.ndarray) -> dict[int, float]:
        import numpy as np

        if not self.loaded:
            return {}
        row = self._row
        rows = row.many(memory_ids) if isinstance(row, _RowMap) else [(i, row[i]) for i in memory_ids if i in row]
        if not rows:
            return {}
        vecs = self._exact_rows(np.asarray([r for _, r in rows], dtype=np.int64))
        sims = np.einsum("ij,j->i", vecs, np.asarray(query, dtype=np.float32))
        return {i: float(s) for (i, _), s in zip(rows, sims)}


def _bound_query(qs: np.ndarray, h: int) -> np.ndarray:
    """``[q_h, |q_t|]`` per query: its first ``h`` coordinates and the norm of the others, whose
    product with a group's kept ``[v_h, |v_t|]`` (``VectorIndex._group_heads``) is Cauchy-Schwarz's
    bound ``q_h.v_h + |q_t| |v_t| >= q.v``."""
    import numpy as np

    out = np.empty((len(qs), h + 1), np.float32)
    out[:, :h] = qs[:, :h]
    out[:, h] = np.sqrt(np.einsum("ij,ij->i", qs[:, h:], qs[:, h:]))
    return out


def _filter_key(
    namespace: str,
    agent_id: str | None,
    include_global: bool,
    types: Sequence[str] | None,
    include_archived: bool,
    scope: str | None,
) -> tuple:
    return (namespace, agent_id, include_global, None if types is None else tuple(types), include_archived, scope)


def _quantize(vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(int8 rows, float32 scales)`` of float32 rows: each row rounded to steps of ``max|v| / 127``
    (a zero row: zeros, scale 0), so ``v_i`` is within ``scale / 2`` of ``q8_i * scale``."""
    import numpy as np

    scale = (np.abs(vecs).max(axis=1, initial=0.0) / np.float32(127)).astype(np.float32)
    safe = np.where(scale > 0, scale, np.float32(1))
    q8 = np.clip(np.rint(vecs / safe[:, None]), -127, 127).astype(np.int8)
    return q8, scale


def _codes(vecs: np.ndarray, words: int) -> np.ndarray:
    import numpy as np

    n, dim = vecs.shape
    out = np.empty((n, words), dtype=np.uint64)
    for s in range(0, n, 65_536):  # bounded temporaries
        bits = np.zeros((min(65_536, n - s), words * 64), dtype=bool)
        bits[:, :dim] = vecs[s : s + 65_536] > 0
        out[s : s + len(bits)] = np.packbits(bits, axis=1).view(np.uint64).reshape(len(bits), words)
    return out


_BYTE_BITS: list[np.ndarray] = []


def _byte_bits() -> np.ndarray:
    """(256, 8) float64: the bits of each byte value, most significant first (np.packbits' order)."""
    import numpy as np

    if not _BYTE_BITS:
        _BYTE_BITS.append(((np.arange(256)[:, None] >> np.arange(7, -1, -1)) & 1).astype(np.float64))
    return _BYTE_BITS[0]


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _same_space(stored: int, dim: int) -> None:
    """Stored vectors of another size than this index's: another process re-embedded the store
    since this one opened it (a typed error that says what to do, never a numpy shape error)."""
    if stored != dim:
        from .errors import EmbedderMismatchError

        raise EmbedderMismatchError(
            f"the stored vectors have {stored} dimensions and this store's {dim}: the database was re-embedded "
            "since this store opened it; reopen the MemoryStore"
        )


def _identity(backend) -> list:
    """What the snapshot must agree with: the embedder record (name, dimensions, when recorded)."""
    row = backend.conn.execute("SELECT name, dimensions, recorded_at FROM embedder_info WHERE id = 1").fetchone()
    return [None, None, None] if row is None else [row[0], int(row[1]), float(row[2])]
