"""The in-process vector index above its exact-search limit (harness_memory/vector_index.py): the
Hamming-code pre-selection followed by the exact rerank finds what exact search finds. The limits are
lowered for the test, so a store of hundreds of memories takes the path a store of tens of thousands
takes."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from harness_memory import MemoryStore

WORDS = (
    "build deploy cache proxy timeout quota disk memory network token schema index lock queue retry "
    "worker shard replica leader backup restore upgrade rollback canary metric alert trace"
).split()


def texts(n: int) -> list[str]:
    rng = np.random.default_rng(18)
    return [" ".join(rng.choice(WORDS, size=6, replace=False)) + f" case {i}" for i in range(n)]


def exact_top(store, query: str, contents: dict[int, str], k: int) -> list[int]:
    ids = list(contents)
    vecs = store.embedder.embed_batch([query] + [contents[i] for i in ids])
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    sims = vecs[1:] @ vecs[0]
    return [ids[j] for j in np.argsort(-sims, kind="stable")[:k]]


@pytest.fixture
def hamming_pass(monkeypatch):
    """The vector index module with small bounds, so a few hundred rows take the Hamming pre-selection and
    its rerank."""
    vi = importlib.import_module("harness_memory.vector_index")
    monkeypatch.setattr(vi, "EXACT_LIMIT", 100)
    monkeypatch.setattr(vi, "RERANK_MIN", 64)
    return vi


def gathered(vi, index, queries, monkeypatch) -> list:
    """The answers with every filter's codes gathered from the whole index (none kept)."""
    monkeypatch.setattr(vi, "SEARCH_CODES_MAX_BYTES", 0)
    index._search_codes.clear()
    return [index.search(qv, namespace="default", agent_id="a", k=10) for qv in queries]


def test_the_hamming_preselection_finds_what_exact_search_finds(tmp_path, clock, monkeypatch):
    vi = importlib.import_module("harness_memory.vector_index")
    monkeypatch.setattr(vi, "EXACT_LIMIT", 100)  # every search of this store takes the approximate path
    monkeypatch.setattr(vi, "RERANK_MIN", 64)  # and reranks only a small share of it
    with MemoryStore(tmp_path / "ix.db", clock=clock) as s:
        mems = s.remember_many([{"content": t, "type": "failure", "agent_id": "a"} for t in texts(800)])
        contents = {m.id: m.content for m in mems}
        assert len(contents) == 800
        check(s, contents)  # the index the writes built
    with MemoryStore(tmp_path / "ix.db", clock=clock) as s:
        check(s, contents)  # the index loaded from the database by a fresh process


def check(s, contents):
    index = s._core.index
    index.sync(s._core.backend)
    overlaps, firsts = [], 0
    for q in texts(830)[800:]:
        qv = s._core.embed([q])[0]
        # k=10: 160 of the 800 rows (the Hamming-nearest) are reranked exactly
        got = [i for i, _ in index.search(qv, namespace="default", agent_id="a", k=10)]
        want = exact_top(s, q, contents, 10)
        overlaps.append(len(set(got) & set(want)) / 10)
        firsts += got[0] == want[0]
    assert np.mean(overlaps) >= 0.9, overlaps
    assert firsts >= 27, firsts


def _hamming(index, rows, qv):
    qc = index._code_of(np.asarray(qv, dtype=np.float32))
    return sum(np.bitwise_count(index.codes[w][rows] ^ qc[w]).astype(np.int64) for w in range(index.words))


def test_the_rerank_takes_every_row_within_the_distance_of_the_cut(tmp_path, clock, hamming_pass):
    """The rerank set is every visible row whose Hamming distance is at most the c-th smallest
    (ties at the cut all kept, none picked arbitrarily): the answer is the exact top k of that set."""
    with MemoryStore(tmp_path / "ix.db", clock=clock) as s:
        s.remember_many([{"content": t, "type": "failure", "agent_id": "a"} for t in texts(800)])
        index = s._core.index
        index.sync(s._core.backend)
        rows = index._rows("default", "a", True, None, False, None)
        tied = 0
        for q in texts(840)[800:]:
            qv = s._core.embed([q])[0]
            ham = _hamming(index, rows, qv)
            cut = np.sort(ham)[160 - 1]  # k=10: max(RERANK_MIN, 16 k) = 160 rows at least
            kept = rows[ham <= cut]
            tied += int((ham == cut).sum() > 1 and (ham < cut).sum() < 160)
            sims = index._gather(np.sort(kept), ascending=True) @ np.asarray(qv, dtype=np.float32)
            want = [int(index.ids[r]) for r in np.sort(kept)[np.argsort(-sims, kind="stable")[:10]]]
            got = [i for i, _ in index.search(qv, namespace="default", agent_id="a", k=10)]
            assert got == want
        assert tied == 40  # every query's cut fell inside a run of equal distances: the case tested


def test_kept_filter_codes_answer_as_the_gathered_codes_do_across_writes(tmp_path, clock, monkeypatch, hamming_pass):
    """A filter's codes kept contiguous for the Hamming pass (extended by appended rows, dropped when
    rows change or go) give the answers of codes gathered from the whole index at every step."""
    vi = hamming_pass
    with MemoryStore(tmp_path / "ix.db", clock=clock) as s:
        mems = s.remember_many([{"content": t, "type": "failure", "agent_id": "a"} for t in texts(600)])
        index = s._core.index
        queries = [s._core.embed([q])[0] for q in texts(620)[600:]]

        def answers(kept: bool) -> list:
            monkeypatch.setattr(vi, "SEARCH_CODES_MAX_BYTES", 64 << 20 if kept else 0)
            index._search_codes.clear()
            index.sync(s._core.backend)
            return [index.search(qv, namespace="default", agent_id="a", k=10) for qv in queries]

        def kept_then_gathered() -> None:
            monkeypatch.setattr(vi, "SEARCH_CODES_MAX_BYTES", 64 << 20)
            index.sync(s._core.backend)
            got = [index.search(qv, namespace="default", agent_id="a", k=10) for qv in queries]  # (cache extended)
            assert index._search_codes  # the kept path was taken
            assert got == answers(kept=False)

        assert answers(kept=True) == answers(kept=False)
        answers(kept=True)  # the codes kept for the steps below
        s.remember_many([{"content": t, "type": "failure", "agent_id": "a"} for t in texts(700)[600:]])
        kept_then_gathered()  # rows appended
        s.archive(mems[3].id)
        s.forget(mems[5].id)
        kept_then_gathered()  # rows changed and gone
        monkeypatch.setattr(vi, "SEARCH_CODES_MAX_BYTES", 1)
        index._search_codes.clear()
        index.search(queries[0], namespace="default", agent_id="a", k=10)
        assert not index._search_codes  # past the bound nothing is kept


def test_kept_filter_codes_follow_a_row_leaving_and_another_joining_between_searches(
    tmp_path, clock, monkeypatch, hamming_pass
):
    """One row of a filter archived and another restored between two searches: the filter holds as
    many rows as before, but not the same ones, so its kept codes must be rebuilt, not reused."""
    vi = hamming_pass
    with MemoryStore(tmp_path / "ix.db", clock=clock) as s:
        mems = s.remember_many([{"content": t, "type": "failure", "agent_id": "a"} for t in texts(600)])
        index = s._core.index
        queries = [s._core.embed([q])[0] for q in texts(640)[600:]]
        s.archive(mems[500].id)  # out of the filter (without archived rows) before the codes are kept
        index.sync(s._core.backend)
        index.search(queries[0], namespace="default", agent_id="a", k=10)
        assert index._search_codes  # kept
        s.archive(mems[5].id)  # leaves the filter ...
        s.restore(mems[500].id)  # ... and another joins: the same count
        index.sync(s._core.backend)
        got = [index.search(qv, namespace="default", agent_id="a", k=10) for qv in queries]
        assert got == gathered(vi, index, queries, monkeypatch)


def test_an_index_compacted_after_most_rows_went_searches_as_one_built_from_the_live_rows(monkeypatch, hamming_pass):
    """When more than half the rows (and over 1,024) are dead, growing the arrays compacts them first:
    every per-row array, the sign codes included, moves with its row, so the searches answer as an
    index built from the live rows alone."""
    vi = hamming_pass  # the Hamming pass reads the codes
    rng = np.random.default_rng(5)
    vecs = rng.standard_normal((4300, 48)).astype(np.float32)

    def rows(ids):
        return [(int(i), "default", f"a{i % 2}", "agent", "note", False, vecs[i]) for i in ids]

    ix = vi.VectorIndex(48)
    ix._reset()
    ix.put_many(rows(range(3000)))  # capacity 4,096
    gone = set(range(0, 3000, 3)) | set(range(1, 3000, 3))  # 2,000 dead
    ix.remove_many(sorted(gone))
    ix.put_many(rows(range(3000, 4300)))  # past the capacity: compacted, not doubled
    assert ix.cap == 4096 and ix._dead == 0 and len(ix) == 2300
    live = [i for i in range(4300) if i not in gone]
    fresh = vi.VectorIndex(48)
    fresh._reset()
    fresh.put_many(rows(live))
    for q in rng.standard_normal((20, 48)).astype(np.float32):
        for agent in ("a0", "a1"):
            want = fresh.search(q, namespace="default", agent_id=agent, k=10)
            assert ix.search(q, namespace="default", agent_id=agent, k=10) == want


def test_kept_filter_codes_grow_past_their_room_and_an_empty_search_is_empty(
    tmp_path, clock, monkeypatch, hamming_pass
):
    """A filter's kept codes have room for a quarter more rows; many more rows appended after they were
    kept make them grow (the answers stay those of gathered codes). An empty index, or k <= 0, answers
    with an empty list."""
    vi = hamming_pass
    empty = vi.VectorIndex(8)
    assert empty.search(np.ones(8, np.float32), namespace="default", agent_id="a", k=5) == []
    with MemoryStore(tmp_path / "ix.db", clock=clock) as s:
        s.remember_many([{"content": t, "type": "failure", "agent_id": "a"} for t in texts(300)])
        index = s._core.index
        queries = [s._core.embed([q])[0] for q in texts(920)[900:]]
        index.sync(s._core.backend)
        index.search(queries[0], namespace="default", agent_id="a", k=10)  # kept for 300 rows, room for 375
        assert index.search(queries[0], namespace="default", agent_id="a", k=0) == []
        s.remember_many([{"content": t, "type": "failure", "agent_id": "a"} for t in texts(600)[300:]])
        index.sync(s._core.backend)
        got = [index.search(qv, namespace="default", agent_id="a", k=10) for qv in queries]
        assert next(iter(index._search_codes.values()))[0] == 600  # grown and extended
        assert got == gathered(vi, index, queries, monkeypatch)
