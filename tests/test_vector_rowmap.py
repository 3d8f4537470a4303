"""The id -> row map of an index read from a snapshot (vector_index._RowMap): its batch lookup
``many`` (recall's cosines for the keyword channel's candidates) answers what ``get`` answers id by
id, with rows added (``[]=``) and dropped (``pop``) since the snapshot, ids absent, and an empty base."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from harness_memory.vector_index import _RowMap

ids = st.integers(min_value=0, max_value=60)


@settings(max_examples=50, deadline=None)
@given(
    base=st.lists(ids, max_size=30, unique=True),
    added=st.dictionaries(ids, st.integers(min_value=0, max_value=99), max_size=8),
    dropped=st.lists(ids, max_size=8),
    asked=st.lists(ids, max_size=40),
)
def test_many_answers_what_get_answers(base, added, dropped, asked):
    rm = _RowMap(np.asarray(sorted(base), dtype=np.int64))
    for mid in dropped:
        rm.pop(mid)
    for mid, r in added.items():
        rm[mid] = r
    want = [(m, rm.get(m)) for m in asked if rm.get(m) is not None]
    assert rm.many(asked) == want


def test_many_on_a_snapshot_row_dropped_then_added_again():
    rm = _RowMap(np.asarray([2, 5, 9], dtype=np.int64))
    assert rm.many([9, 1, 5, 10, 2]) == [(9, 2), (5, 1), (2, 0)]
    rm.pop(5)
    assert rm.many([5, 9]) == [(9, 2)]
    rm[5] = 7  # put again: a row of the in-memory tail
    assert rm.many([5, 9]) == [(5, 7), (9, 2)]
