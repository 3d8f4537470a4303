"""The storage seam's vector rows read back alike on SQLite and PostgreSQL (issue 18): a forgotten memory
leaves no vector behind, an archived one keeps its vector flagged, and the change log says which
memories changed since a point (what a process-local copy of the vectors catches up from)."""

from __future__ import annotations

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
