"""The in-process vector index above its exact-search limit (harness_memory/vector_index.py): the
Hamming-code pre-selection followed by the exact rerank finds what exact search finds. The limits are
lowered for the test, so a store of hundreds of memories takes the path a store of tens of thousands
takes."""

from __future__ import annotations

import importlib

import numpy as np

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
