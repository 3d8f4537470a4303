"""The keyword channel's prefilter (issue 11): with a loaded in-process vector index, the rows a
recall's filters reject (namespace, agent visibility, types, archived, as the index holds them:
``VectorIndex.hidden``) are left out before FTS5's BM25 scores them. The answer must be the one
without it: the same ids, scores and order, whatever the filters, with the short list cut or not,
and for memories the index does not know yet (written by another connection since its sync).

Real SQLite files with FTS5 and sqlite-vec."""

from __future__ import annotations

import pytest

from conftest import NOTE_WORDS, note_items
from harness_memory import MemoryStore
from harness_memory.recall import RecallQuery, _known_hidden, _where


def _query(text: str, agent: str | None, **kw) -> RecallQuery:
    base = dict(
        text=text,
        namespace="default",
        agent_id=agent,
        types=None,
        tags=[],
        task_signature=None,
        error=None,
        include_global=True,
        include_archived=False,
        min_relevance=None,
        since=None,
        until=None,
        limit=10,
    )
    base.update(kw)
    return RecallQuery(**base)


FILTERS = [
    {},
    {"include_global": False},
    {"types": ["failure"]},
    {"include_archived": True},
    {"include_archived": True, "types": ["success"], "include_global": False},
]


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "m.db") as w:
        mems = w.remember_many(note_items(400))
        w.remember_many([{**it, "namespace": "other"} for it in note_items(60, seed=3)])
        for m in mems[::9]:
            w.archive(m.id)
        for m in mems[5::31]:
            w.forget(m.id)
    s = MemoryStore(tmp_path / "m.db")
    s._core.index.sql_below = 0  # the in-process index, as a large store's
    s.recall("deploy cache", agent_id="a1", record=False)
    assert s._core.index.loaded
    yield s
    s.close()


def _both(s: MemoryStore, q: RecallQuery, k: int, budget: int | None):
    core, b = s._core, s._core.backend
    where, params = _where(core, q, core.now())
    with b.read():
        hidden = _known_hidden(core, q)
        assert hidden is not None
        plain = b.keyword_search(q.text, where, params, k, posting_budget=budget)
        pre = b.keyword_search(q.text, where, params, k, posting_budget=budget, hidden=hidden)
    return plain, pre, hidden


@pytest.mark.parametrize("k,budget", [(50, None), (5, None), (5, 40)], ids=["long", "short-list", "budget"])
def test_the_prefiltered_keyword_channel_answers_as_the_unfiltered_one(store, k, budget):
    marked = 0
    for words in zip(NOTE_WORDS, NOTE_WORDS[3:], NOTE_WORDS[7:]):
        for agent in ("a0", "a2", None):
            for f in FILTERS:
                plain, pre, hidden = _both(store, _query(" ".join(words), agent, **f), k, budget)
                assert pre == plain, (words, agent, f)
                marked += sum(hidden)
    assert marked > 0  # the prefilter had rows to leave out


def test_rows_written_since_the_index_synced_are_kept(store, tmp_path):
    with MemoryStore(tmp_path / "m.db") as other:  # another connection: the index has not seen these
        new = other.remember("zeppelin harbour lockfile", type="failure", agent_id="a1").id
        glob = other.remember("zeppelin harbour global", type="success", agent_id="a0", scope="global").id
    q = _query("zeppelin harbour", "a1")
    core, b = store._core, store._core.backend
    where, params = _where(core, q, core.now())
    stale = core.index.hidden("default", "a1", True, None, False)
    with b.read():
        got = b.keyword_search(q.text, where, params, 10, hidden=stale)  # marks from before those writes
    assert {i for i, _ in got} == {new, glob}
    plain, pre, hidden = _both(store, q, 10, None)  # synced: the new rows are known, and visible
    assert pre == plain and {i for i, _ in pre} == {new, glob}
    assert new in core.index._row and glob in core.index._row  # (an id past the marks' end is not marked)
    assert not any(i < len(hidden) and hidden[i] for i in (new, glob))


def test_a_recall_with_the_prefilter_returns_what_one_without_it_does(store, tmp_path):
    store._core.clock = lambda: 1.8e9
    with MemoryStore(tmp_path / "m.db") as ref:  # its index never loads: keyword channel alone
        ref._core.clock = lambda: 1.8e9
        for text in ("deploy cache retry", "rust compile flaky", "schema migrate index worker"):
            for agent, f in (("a1", {}), ("a2", {"types": ["failure"]}), ("a0", {"include_archived": True})):
                want = ref.recall(text, agent_id=agent, channels={"keyword"}, record=False, **f)
                got = store.recall(text, agent_id=agent, channels={"keyword"}, record=False, **f)
                assert [(h.memory.id, h.score) for h in got] == [(h.memory.id, h.score) for h in want]
        assert not ref._core.index.loaded
