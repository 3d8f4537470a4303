"""An in-process vector index over the vec0 table: the fast KNN path.

sqlite-vec's brute-force KNN costs ~80 ms at 100k float vectors on this hardware, so
recall keeps a process-local copy: sign-bit codes for a Hamming pre-selection (popcount
over 64-bit words) and the float32 vectors for an exact cosine rerank. Filters (namespace,
agent visibility, type, archived) are boolean masks applied *before* the KNN, so a
filtered search never returns fewer than k rows when k rows match.

The copy follows the database through the ``vector_changes`` log, which every vector
write appends to in the same transaction: each search first applies the changes made
since it last looked (by any process), so it is never stale.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["VectorIndex"]

EXACT_LIMIT = 16_384  # below this many candidates, score all of them exactly
RERANK_MIN = 2048


class _Interner:
    def __init__(self) -> None:
        self.codes: dict[str, int] = {}

    def code(self, s: str) -> int:
        c = self.codes.get(s)
        if c is None:
            c = self.codes[s] = len(self.codes)
        return c

    def get(self, s: str) -> int:
        return self.codes.get(s, -1)


class VectorIndex:
    def __init__(self, dimensions: int):
        self.dim = dimensions
        self.words = (dimensions + 63) // 64
        self._reset()

    _ARRAYS = ("ids", "vecs", "codes", "ns", "agent", "is_global", "mtype", "archived", "alive")

    def _reset(self) -> None:
        self.seq: int | None = None
        self._strings = _Interner()
        self._row: dict[int, int] = {}
        self._n = 0
        self._dead = 0
        self.cap = 0
        self._alloc(1024)

    def _alloc(self, cap: int) -> None:
        shapes = {"vecs": (cap, self.dim), "codes": (cap, self.words)}
        dtypes = {"ids": np.int64, "vecs": np.float32, "codes": np.uint64, "ns": np.int32, "agent": np.int32,
                  "is_global": bool, "mtype": np.int32, "archived": bool, "alive": bool}
        for name in self._ARRAYS:
            new = np.zeros(shapes.get(name, (cap,)), dtype=dtypes[name])
            if self.cap:
                new[: self._n] = getattr(self, name)[: self._n]
            setattr(self, name, new)
        self.cap = cap

    def __len__(self) -> int:
        return self._n - self._dead

    def _code_of(self, v: np.ndarray) -> np.ndarray:
        bits = np.zeros(self.words * 64, dtype=bool)
        bits[: self.dim] = v > 0
        return np.packbits(bits).view(np.uint64)

    def put(self, memory_id: int, namespace: str, agent_id: str, scope: str, memory_type: str,
            archived: bool, vector: np.ndarray) -> None:
        r = self._row.get(memory_id)
        if r is None:
            if self._n == self.cap:
                self._alloc(self.cap * 2)
            r = self._n
            self._n += 1
            self._row[memory_id] = r
        self.ids[r] = memory_id
        self.vecs[r] = vector
        self.codes[r] = self._code_of(vector)
        self.ns[r] = self._strings.code(namespace)
        self.agent[r] = self._strings.code(agent_id)
        self.is_global[r] = scope == "global"
        self.mtype[r] = self._strings.code(memory_type)
        self.archived[r] = bool(archived)
        self.alive[r] = True

    def remove(self, memory_id: int) -> None:
        r = self._row.pop(memory_id, None)
        if r is not None:
            self.alive[r] = False
            self._dead += 1
            if self._dead > 1024 and self._dead > self._n // 4:
                self._compact()

    def _compact(self) -> None:
        keep = np.flatnonzero(self.alive[: self._n])
        for name in self._ARRAYS:
            arr = getattr(self, name)
            arr[: len(keep)] = arr[keep]
        self._n = len(keep)
        self._dead = 0
        self._row = {int(i): r for r, i in enumerate(self.ids[: self._n])}

    # -- synchronisation with the database -------------------------------------------------
    def sync(self, backend) -> None:
        """Apply the changes logged since the last sync (a full load the first time)."""
        with backend.read():
            lo, hi = backend.vector_change_seq()
            if self.seq is not None and hi == self.seq:
                return
            full = self.seq is None or (lo > self.seq + 1) or hi < self.seq
            if full:
                self._load_all(backend)
                self.seq = hi
                return
            rows = backend.iter_vectors(since_seq=self.seq)
            for mid, ns, agent, scope, mtype, archived, vec in rows:
                if vec is None:
                    self.remove(int(mid))
                else:
                    self.put(int(mid), ns, agent, scope, mtype, bool(archived), vec)
            self.seq = hi

    def _load_all(self, backend) -> None:
        """Bulk load (vectorised: one pass over the vec0 table, no per-row numpy work)."""
        self._reset()
        # vec0 scans its metadata columns slowly (~1.6 s per 100k rows here): read only the
        # vectors from it, and the filter fields from the memories table (kept equal to vec0's).
        vec_rows = backend.conn.execute(f"SELECT memory_id, embedding FROM {backend.VEC_TABLE}").fetchall()
        n = len(vec_rows)
        if n == 0:
            return
        meta = {r[0]: r[1:] for r in backend.conn.execute(
            "SELECT id, namespace, agent_id, scope, memory_type, archived FROM memories")}
        vec_rows = [r for r in vec_rows if r[0] in meta]
        n = len(vec_rows)
        cap = 1024
        while cap < n:
            cap *= 2
        self._alloc(cap)
        ids, blobs = zip(*vec_rows) if n else ((), ())
        self.ids[:n] = np.fromiter(ids, dtype=np.int64, count=n)
        self.vecs[:n] = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(n, self.dim)
        bits = np.zeros((n, self.words * 64), dtype=bool)
        bits[:, : self.dim] = self.vecs[:n] > 0
        self.codes[:n] = np.packbits(bits, axis=1).view(np.uint64).reshape(n, self.words)
        code = self._strings.code
        rows = [meta[i] for i in ids]
        self.ns[:n] = [code(r[0]) for r in rows]
        self.agent[:n] = [code(r[1]) for r in rows]
        self.is_global[:n] = [r[2] == "global" for r in rows]
        self.mtype[:n] = [code(r[3]) for r in rows]
        self.archived[:n] = [bool(r[4]) for r in rows]
        self.alive[:n] = True
        self._n = n
        self._row = {int(i): r for r, i in enumerate(ids)}

    # -- search ----------------------------------------------------------------------------
    def _mask(self, namespace: str, agent_id: str | None, include_global: bool,
              types: Sequence[str] | None, include_archived: bool, scope: str | None = None) -> np.ndarray:
        n = self._n
        m = self.alive[:n] & (self.ns[:n] == self._strings.get(namespace))
        if not include_archived:
            m &= ~self.archived[:n]
        a = self._strings.get(agent_id) if agent_id is not None else -2
        own = (self.agent[:n] == a) if agent_id is not None else np.zeros(n, bool)
        if scope == "agent":
            m &= own & ~self.is_global[:n]
        elif scope == "global":
            m &= self.is_global[:n] & (own if agent_id is not None else True)
        else:
            m &= (own | self.is_global[:n]) if include_global else own
        if types is not None:
            mt = self.mtype[:n]
            any_type = np.zeros(n, bool)
            for t in types:
                any_type |= mt == self._strings.get(t)
            m &= any_type
        return m

    def candidates(self, *, namespace: str, agent_id: str | None, scope: str | None = None,
                   types: Sequence[str] | None = None, include_global: bool = True,
                   include_archived: bool = False) -> np.ndarray:
        """Row positions passing the filters (for batched scoring with :meth:`best_matches`)."""
        return np.flatnonzero(self._mask(namespace, agent_id, include_global, types, include_archived, scope))

    def best_matches(self, rows: np.ndarray, queries: np.ndarray, exclude: set[int] = frozenset()) -> list[tuple[int, float] | None]:
        """For each query, the most similar vector among ``rows`` (exact cosine, one matrix product)."""
        if len(rows) == 0:
            return [None] * len(queries)
        if exclude:
            keep = ~np.isin(self.ids[rows], np.fromiter(exclude, dtype=np.int64, count=len(exclude)))
            rows = rows[keep]
            if len(rows) == 0:
                return [None] * len(queries)
        out: list[tuple[int, float] | None] = []
        vecs = self.vecs[rows]
        for start in range(0, len(queries), 256):
            sims = vecs @ np.asarray(queries[start : start + 256], dtype=np.float32).T
            best = sims.argmax(axis=0)
            out += [(int(self.ids[rows[b]]), float(sims[b, j])) for j, b in enumerate(best)]
        return out

    def search(self, query: np.ndarray, *, namespace: str, agent_id: str | None, include_global: bool = True,
               types: Sequence[str] | None = None, include_archived: bool = False, k: int = 10,
               scope: str | None = None) -> list[tuple[int, float]]:
        """``(memory_id, cosine)`` of the k nearest visible vectors, best first."""
        if k <= 0 or self._n == 0:
            return []
        idx = np.flatnonzero(self._mask(namespace, agent_id, include_global, types, include_archived, scope))
        if len(idx) == 0:
            return []
        q = np.ascontiguousarray(query, dtype=np.float32)
        if len(idx) > EXACT_LIMIT:
            qc = self._code_of(q)
            ham = np.bitwise_count(self.codes[idx] ^ qc).sum(axis=1, dtype=np.uint32)
            c = min(len(idx), max(RERANK_MIN, 16 * k))
            idx = idx[np.argpartition(ham, c - 1)[:c]]
        sims = self.vecs[idx] @ q
        if len(idx) > k:
            part = np.argpartition(-sims, k - 1)[:k]
            idx, sims = idx[part], sims[part]
        order = np.argsort(-sims, kind="stable")
        return [(int(self.ids[idx[o]]), float(sims[o])) for o in order]

    def similarities(self, memory_ids: Sequence[int], query: np.ndarray) -> dict[int, float]:
        rows = [(i, self._row[i]) for i in memory_ids if i in self._row]
        if not rows:
            return {}
        sims = self.vecs[[r for _, r in rows]] @ np.asarray(query, dtype=np.float32)
        return {i: float(s) for (i, _), s in zip(rows, sims)}
