"""The storage seam's vector rows read back alike on SQLite and PostgreSQL (issue 18): a forgotten memory
leaves no vector behind, an archived one keeps its vector flagged, and the change log says which
memories changed since a point (what a process-local copy of the vectors catches up from); a batch of
searches (near-duplicate checks of a batch write) answers each as one search does."""

from __future__ import annotations

import pytest

from conftest import table_counts


def test_vectors_follow_forget_and_archive_and_the_change_log_names_them(store):
    b = store._core.backend
    mems = [
        store.remember(text, type="failure", agent_id="a")
        for text in ("pip fails behind the proxy", "docker build runs out of disk", "flaky webhook test times out")
    ]
    assert table_counts(store)[b.VEC_TABLE] == 3
    lo, start = b.vector_change_seq()
    assert 0 < lo <= start
    store.forget(mems[0].id)
    store.archive(mems[1].id)
    assert table_counts(store)[b.VEC_TABLE] == 2  # the forgotten memory's vector is gone
    assert set(b.get_vectors([m.id for m in mems])) == {mems[1].id, mems[2].id}
    rows = {r[0]: r for r in b.iter_vectors()}  # every stored vector with its filter fields
    assert set(rows) == {mems[1].id, mems[2].id}
    assert [bool(rows[m.id][5]) for m in mems[1:]] == [True, False]  # archived flag
    assert rows[mems[2].id][1:5] == ("default", "a", "agent", "failure")
    assert len(rows[mems[2].id][6]) == store.embedder.dimensions
    _, end = b.vector_change_seq()
    assert end > start
    changed = {r[0]: r for r in b.iter_vectors(since_seq=start)}  # only what changed since: one gone, one put
    assert set(changed) == {mems[0].id, mems[1].id}
    assert changed[mems[0].id][1:] == (None,) * 6
    assert bool(changed[mems[1].id][5]) and len(changed[mems[1].id][6]) == store.embedder.dimensions
    assert list(b.iter_vectors(since_seq=end)) == []
    paged = [r[0] for r in b.iter_vectors(batch=1)]  # read a page at a time: the same rows, in id order
    assert paged == sorted(rows)


@pytest.mark.parametrize("staged", [False, True])
def test_a_batch_of_vector_searches_answers_each_as_one_search_does(store, monkeypatch, staged):
    # (PostgreSQL stages a batch of COPY_ROWS searches or more by COPY and runs them in one statement: with
    # staged, every batch takes that path; SQLite runs each search alike either way)
    b = store._core.backend
    if staged:
        from harness_memory import postgres_backend

        monkeypatch.setattr(postgres_backend, "COPY_ROWS", 1)
    texts = [
        ("pip fails behind the proxy", "default", "a"),
        ("pip cannot reach the package index", "default", "a"),
        ("docker build runs out of disk", "default", "a"),
        ("the disk of the build host is full", "default", "b"),
        ("flaky webhook test times out", "other", "a"),
    ]
    for text, ns, agent in texts:
        store.remember(text, type="failure", agent_id=agent, namespace=ns)
    archived = store.remember("pip proxy settings for the mirror", type="failure", agent_id="a")
    store.archive(archived.id)
    vectors = store._core.embed([t for t, _, _ in texts])
    queries = [(vectors[i], ns, agent, "agent", "failure") for i, (_, ns, agent) in enumerate(texts)]
    with b.write():
        many = b.vector_knn_many(queries, 3)
    one = [
        b.vector_knn(v, namespace=ns, agent_id=a, scope=s, memory_type=t, include_archived=True, k=3)
        for v, ns, a, s, t in queries
    ]
    assert [[mid for mid, _ in hits] for hits in many] == [[mid for mid, _ in hits] for hits in one]
    for got, want in zip(many, one, strict=True):
        assert [sim for _, sim in got] == pytest.approx([sim for _, sim in want], abs=1e-5)
    assert many[0][0][1] == pytest.approx(1.0, abs=1e-5)  # a stored text's own vector: cosine 1
    assert archived.id in [mid for mid, _ in many[0]]  # archived rows are searched too
