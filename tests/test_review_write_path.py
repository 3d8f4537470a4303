"""Review of issue 11's write-path speed changes (differential testing against b7da27b): the defects found.

- remember_many's memory stays linear in the batch: a batch of 3,000 distinct memories of one group must
  not trace more than 28 KB an item (tracemalloc, numpy's buffers included; b7da27b: 16.4 KB an item, 48 MB;
  HEAD at review: 42.1 KB, 123 MB; writes._may_repeat's whole n x n product of
  the group's vectors, with its float32 temporaries, took ~12 n^2 bytes: 6,000 items 423 MB, 20,000 ~5 GB).
- remember_many into a large group at a low near_duplicate_threshold stays within a fixed budget: 1,000 items into
  a group of 4,000 rows at 0.5 (where the Cauchy-Schwarz bound keeps nearly every pair) must not trace more than
  100 MB (b7da27b: 42.6 MB; HEAD at review: 187.5 MB, 10,000 rows 444 MB: VectorIndex.best_in_group kept ~36
  bytes of index arrays for every (item, row) pair the bound keeps, the whole batch at once).
- redact() answers a short text with the caller's own kind of string: a str subclass (an Enum's member)
  redacted once is never the answer given for an equal plain str later, nor the other way round
  (redact._short keyed subclasses and plain strings alike: redact("pip") returned Tag.PIP, whose str() is
  "Tag.PIP").
- the blocks that bound that memory decide nothing: tiny blocks merge exactly what one pass merges.
"""

from __future__ import annotations

import random
import tracemalloc
from enum import Enum

from harness_memory import MemoryStore
from harness_memory.redact import redact
from harness_memory.settings import Settings


def test_a_large_batch_of_one_group_takes_memory_linear_in_its_size(tmp_path):
    rnd = random.Random(0)
    words = [f"w{i}" for i in range(5000)]
    n = 3000
    items = [
        {
            "content": " ".join(rnd.choice(words) for _ in range(12)) + f" item {i}",
            "type": "failure",
            "agent_id": "a",
        }
        for i in range(n)
    ]
    with MemoryStore(str(tmp_path / "m.db")) as store:
        store.remember("warm up", type="failure", agent_id="a")
        tracemalloc.start()
        try:
            got = store.remember_many(items)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len({m.id for m in got}) == n  # all distinct: nothing merged
    assert peak <= 28 * 1024 * n, f"remember_many of {n} items traced {peak / 2**20:.0f} MB"


def test_a_batch_into_a_large_group_at_a_low_threshold_keeps_a_bounded_memory(tmp_path):
    rnd = random.Random(0)
    words = [f"w{i}" for i in range(50000)]

    def text(i: int) -> str:
        return " ".join(rnd.choice(words) for _ in range(12)) + f" item {i}"

    with MemoryStore(str(tmp_path / "m.db"), settings=Settings(near_duplicate_threshold=0.5)) as store:
        for a in range(0, 4000, 1000):
            store.remember_many([{"content": text(i), "type": "failure", "agent_id": "a"} for i in range(a, a + 1000)])
        batch = [{"content": text(10**6 + i), "type": "failure", "agent_id": "a"} for i in range(1000)]
        tracemalloc.start()
        try:
            store.remember_many(batch)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak <= 100 * 2**20, f"remember_many of 1,000 into 4,000 rows traced {peak / 2**20:.0f} MB"


class Tag(str, Enum):  # noqa: UP042 (not StrEnum: its str() is the value; this one's is "Tag.PIP")
    PIP = "pip"


class Text(str):
    pass


def test_redact_returns_the_callers_kind_of_string_for_a_short_text():
    for first, then in (
        (Tag.PIP, "pip"),
        ("pip", Tag.PIP),
        (Text("net"), "net"),
        ("net", Text("net")),
    ):
        redact(first)
        out, kinds = redact(then)
        assert kinds == []
        assert type(out) is type(then), (first, then, type(out))
        assert str(out) == str(then)


def test_the_blocked_passes_give_the_answers_of_one_pass(tmp_path, monkeypatch):
    """The blocks that keep memory bounded (VectorIndex.best_in_group's bound and kept pairs, writes._may_repeat's
    rows) decide nothing: blocks of one query, a few pairs and one row merge exactly what one pass merges."""
    from harness_memory import vector_index, writes

    rnd = random.Random(7)
    words = [f"w{i}" for i in range(40)]  # few words: many near duplicates at 0.6, within the batch and stored

    def batch(n: int) -> list[dict]:
        return [
            {"content": " ".join(rnd.choice(words) for _ in range(6)), "type": "failure", "agent_id": "a"}
            for _ in range(n)
        ]

    batches = [batch(120) for _ in range(3)]

    def run(path) -> list[list[tuple[int, str]]]:
        with MemoryStore(str(path), settings=Settings(near_duplicate_threshold=0.6)) as store:
            return [[(m.id, m.content) for m in store.remember_many(b)] for b in batches]

    whole = run(tmp_path / "whole.db")
    monkeypatch.setattr(vector_index, "BEST_BOUND_BLOCK", 1)
    monkeypatch.setattr(vector_index, "BEST_PAIRS_BLOCK", 3)
    monkeypatch.setattr(writes, "MAY_REPEAT_PAIRS", 1)
    calls = []
    resolve = vector_index.VectorIndex._best_pairs
    monkeypatch.setattr(vector_index.VectorIndex, "_best_pairs", lambda self, *a: calls.append(1) or resolve(self, *a))
    blocked = run(tmp_path / "blocked.db")
    assert blocked == whole
    assert len(calls) > 100  # the group's bound was used, a query or so at a time
    assert len({i for b in whole for i, _ in b}) < sum(len(b) for b in batches)  # near duplicates were merged
