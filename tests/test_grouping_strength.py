"""TemplateMiner's grouping by evidence (signing method 25) under mutation testing and review: the promises of
docs/signatures.md as properties over random message sequences on real SQLite files, and tests for what the
method's own tests (tests/test_grouping_evidence.py) let through.

Promised: a position becomes ``<*>`` only once ``EVIDENCE`` distinct words were seen there (a masked part is
evidence by itself); a generalisation never takes a template's last constant token (``MIN_CONSTANT``); an id keeps
naming its group however far the group generalises (the ids a message was given resolve to the group that signs it
now); links are re-pointed, never chained."""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import WILDCARD, TemplateMiner

_WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
# message shapes of one length (one partition) whose slots take words, numbers (masked) or nothing special
_SHAPES = [
    "job {0} failed on node {1} after {2} tries",
    "job {0} stopped on node {1} after {2} tries",
    "cache {0} evicted from pool {1} at {2} load",
]
_SLOT = st.one_of(st.sampled_from(_WORDS), st.integers(0, 999).map(str))
_MESSAGE = st.tuples(st.sampled_from(_SHAPES), _SLOT, _SLOT, _SLOT).map(lambda t: t[0].format(*t[1:]))


def _templates(store: MemoryStore) -> list[list[str]]:
    rows = store._core.backend.execute("SELECT tokens FROM error_templates").fetchall()
    return [json.loads(r[0]) for r in rows]


def _links(store: MemoryStore) -> dict[str, str]:
    return dict(store._core.backend.execute("SELECT sig, canonical FROM error_signature_links").fetchall())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_MESSAGE, min_size=1, max_size=14))
def test_grouping_keeps_its_promises_over_any_sequence(messages):
    with tempfile.TemporaryDirectory() as d, MemoryStore(Path(d) / "m.db") as s:
        miner = s._core.miner
        given_ids: dict[str, set[str]] = {}
        for m in messages:
            given_ids.setdefault(m, set()).add(s.error_signature(m).id)
        # every template keeps a constant token (every message here has some)
        for tpl in _templates(s):
            assert any(t != WILDCARD for t in tpl), tpl
        # links are never chained: a canonical id is no linked id itself
        links = _links(s)
        assert not (set(links.values()) & set(links)), links
        # an id once given keeps naming the group that signs the message now
        for m, ids in given_ids.items():
            now = miner.canonical(s.error_signature(m).id)
            assert {miner.canonical(i) for i in ids} == {now}
            assert ids <= set(miner.group(now))


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        yield s


def test_three_words_at_one_place_are_three_groups_and_the_fourth_makes_one(store):
    miner = store._core.miner
    ids = [store.error_signature(f"replica {w} lagging behind the primary").id for w in _WORDS[:3]]
    assert len(set(ids)) == 3
    assert all(t != WILDCARD for tpl in _templates(store) for t in tpl)  # nothing generalised yet
    fourth = store.error_signature("replica delta lagging behind the primary")
    assert fourth.template == "replica <*> lagging behind the primary"
    assert {miner.canonical(i) for i in ids} == {fourth.id}
    assert sorted(miner.group(fourth.id)) == sorted({fourth.id, *ids})
    assert len(_templates(store)) == 1  # the covered templates were removed, their ids linked


def test_two_positions_count_their_words_together(store):
    # two words differ at once: the pairs seen there are what counts (four distinct pairs make the variables)
    pairs = [("red", "east"), ("blue", "west"), ("green", "north")]
    ids = {store.error_signature(f"shard {a} moved to zone {b} today").id for a, b in pairs}
    assert len(ids) == 3
    last = store.error_signature("shard black moved to zone south today")
    assert last.template == "shard <*> moved to zone <*> today"


def test_the_same_word_again_is_no_new_evidence(store):
    # alpha, beta, alpha, beta, gamma: three distinct words however often they come
    for w in ["alpha", "beta", "alpha", "beta", "gamma", "gamma"]:
        store.error_signature(f"tenant {w} exceeded the soft cap")
    assert all(WILDCARD not in tpl for tpl in _templates(store))
    assert len(_templates(store)) == 3


def test_words_covered_only_by_a_template_of_another_shape_are_no_evidence(store):
    # templates of the partition that the merged one would not cover (another constant word elsewhere) do not count
    for w in ["alpha", "beta", "gamma"]:
        store.error_signature(f"backup {w} rejected by the vault")
    store.error_signature("backup delta accepted by the vault")  # differs at two places from each: not covered
    assert len(_templates(store)) == 4 and all(WILDCARD not in tpl for tpl in _templates(store))


def test_a_masked_part_generalises_at_once_and_keeps_the_rest(store):
    a = store.error_signature("upload of part 17 failed for bucket logs")
    b = store.error_signature("upload of part many failed for bucket logs")
    assert b.id == a.id and b.template == "upload of part <*> failed for bucket logs"


def test_evidence_two_generalises_on_the_first_difference(store, monkeypatch):
    # EVIDENCE = 2 is the earlier rule (the docs' parenthesis): the first different word makes the variable
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)
    a = store.error_signature("mirror alpha unreachable since noon")
    b = store.error_signature("mirror beta unreachable since noon")
    assert b.id == a.id and b.template == "mirror <*> unreachable since noon"


def test_evidence_three_generalises_on_the_third_word(store, monkeypatch):
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 3)
    ids = [store.error_signature(f"mirror {w} unreachable since noon").id for w in _WORDS[:3]]
    assert ids[0] != ids[1] and store._core.miner.canonical(ids[0]) == ids[2]


@pytest.mark.parametrize("min_constant", [1, 2])
def test_min_constant_is_the_number_of_constant_tokens_a_generalisation_keeps(store, monkeypatch, min_constant):
    # (EVIDENCE 2: the one word that differs is enough) 'disk <*> <*> full' meets '... empty': merged, one
    # constant token is left, which MIN_CONSTANT 1 allows and 2 does not
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)
    monkeypatch.setattr(TemplateMiner, "MIN_CONSTANT", min_constant)
    a = store.error_signature("disk 1 2 full")
    b = store.error_signature("disk 4 5 empty")
    assert a.template == "disk <*> <*> full"
    if min_constant == 1:
        assert b.id == a.id and b.template == "disk <*> <*> <*>"
    else:
        assert b.id != a.id and b.template == "disk <*> <*> empty"


def test_the_last_constant_token_is_kept_even_where_a_masked_part_meets_it(store):
    # a masked part is evidence by itself, so nothing but MIN_CONSTANT stops '<*> full' from taking '7' (two values:
    # a run of three or more is one value since method 41, so '1 2 3 full' signs as '<*> full')
    a = store.error_signature("1 full")
    b = store.error_signature("4 7")
    assert a.template == "<*> full" and b.template == "<*> <*>" and b.id != a.id
    assert store.error_signature("8 full").id == a.id == store.error_signature("1 2 3 full").id
    assert all(any(t != WILDCARD for t in tpl) for tpl in _templates(store) if tpl != [WILDCARD] * 2)


def _base_id(store: MemoryStore, message: str) -> tuple[str, str]:
    """The id a message's template is issued (``err_`` + the first 16 hex digits of sha256 of its partition and
    tokens), and that hash, read from a fresh signing of it."""
    sig = store.error_signature(message)
    tokens = sig.template.split(" ")
    part = TemplateMiner.partition(tokens, sig.frame)
    base = hashlib.sha256(f"{part}\x00{' '.join(tokens)}".encode()).hexdigest()
    return sig.id, base


def test_an_id_already_taken_is_never_issued_again(tmp_path):
    message = "volume alpha detached from instance beta"
    with MemoryStore(tmp_path / "a.db") as a:
        first, base = _base_id(a, message)
    assert first == f"err_{base[:16]}"
    # a file where that id is taken (a template linked into another group keeps its id in error_signature_links)
    with MemoryStore(tmp_path / "b.db") as b:
        with b._core.backend.write() as c:
            c.execute(
                "INSERT INTO error_signature_links(sig, canonical, linked_at) VALUES (?, ?, ?)",
                (first, "err_0000000000000000", 0.0),
            )
        again = b.error_signature(message).id
    assert again == f"err_{hashlib.sha256(f'{base}1'.encode()).hexdigest()[:16]}"
    assert re.fullmatch(r"err_[0-9a-f]{16}", again)


def test_a_template_another_process_created_meanwhile_is_joined_not_duplicated(tmp_path):
    # store A reads the partition (nothing there), then another writer signs the same message before A takes the
    # write lock: A re-reads under the lock and signs into that template, one id for one message
    message = "lease gamma expired before renewal on shard nine"
    with MemoryStore(tmp_path / "m.db") as a, MemoryStore(tmp_path / "m.db") as b:
        miner = a._core.miner
        before_lock = miner._neighbour
        other: list[str] = []

        def neighbour_then_other_writer(tokens, frame):
            got = before_lock(tokens, frame)
            if not other:
                other.append(b.error_signature(message).id)
            return got

        miner._neighbour = neighbour_then_other_writer
        mine = a.error_signature(message).id
        assert other and mine == other[0]
        assert len(_templates(a)) == 1


def test_a_word_met_by_a_masked_part_generalises_at_once(store):
    # the word first, the masked number second: the template's constant word meets a masked part, which is evidence
    # by itself (no other word was seen there)
    a = store.error_signature("upload of part many failed for bucket logs")
    b = store.error_signature("upload of part 17 failed for bucket logs")
    assert b.id == a.id and b.template == "upload of part <*> failed for bucket logs"


def test_another_stores_generalisation_is_seen_once_a_read_is_older_than_the_refresh_window(tmp_path):
    # store B keeps what it read for REFRESH_SECONDS (0.25 s); after that its next read sees what store A wrote: the
    # template B created is linked into A's group, and B's id for its message is then the group's
    words = ["alpha", "beta", "gamma", "delta"]
    WINDOW = 0.3  # past the documented 0.25 s
    message = "session for user {} opened on the console"
    # (B's last read was before t0; whatever A's writes take, B's next read after t0 + WINDOW is older than the window)
    with MemoryStore(tmp_path / "m.db") as a, MemoryStore(tmp_path / "m.db") as b:
        a.error_signature(message.format(words[0]))
        mine = b.error_signature(message.format(words[1])).id  # B reads and writes: its window starts here
        t0 = time.monotonic()
        group = [a.error_signature(message.format(w)).id for w in (words[2], words[3])][-1]
        assert a._core.miner.canonical(mine) == group != mine
        time.sleep(max(0.0, t0 + WINDOW - time.monotonic()))
        assert b.error_signature(message.format(words[1])).id == group
