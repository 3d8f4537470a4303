"""Fix evidence read back exactly (issue 19): every count a FixEvidence reports, what a link
keeps of its error, the edges of binding and of the similar and category levels, credits on
an aliased error."""

from __future__ import annotations

from harness_memory import MemoryStore, Settings
from harness_memory.error_signatures import TemplateMiner

AGENT = "coder"
TASK = {"id": "T-9", "title": "sync replicas", "agent_id": AGENT}
NO_PYTEST = "/usr/bin/python3: No module named pytest"


def test_every_count_of_the_evidence_is_read_back(store):
    for _ in range(3):
        store.learn_fix(NO_PYTEST, "bin/test sympy", agent_id=AGENT)
    store.learn_fix(NO_PYTEST, "bin/test sympy", agent_id=AGENT, worked=False)
    got = store.on_task_error(TASK, NO_PYTEST)
    fix = got.fixes[0]
    store.apply(fix.id, helpful=True, agent_id=AGENT, task_id=TASK["id"])
    store.apply(fix.id, helpful=False, agent_id=AGENT, task_id=TASK["id"])
    store.apply(fix.id, helpful=False, agent_id=AGENT, task_id=TASK["id"])
    ev = store.fixes_for(NO_PYTEST, agent_id=AGENT)[0]
    assert (ev.level, ev.worked, ev.failed, ev.helpful, ev.unhelpful, ev.variants) == ("exact", 3, 1, 1, 2, 2)
    assert ev.score == 3 - 1 + 1 - 2
    # the did-not-work observation is a failure memory of the same kind: a second variant
    assert ev.explain() == (
        "exact signature match; worked 3x, did not work 1x; credits +1/-2; 2 variant(s) of this fix; score 1.00"
    )


def test_credits_without_the_error_count_for_every_error_and_are_read_back(store):
    m = store.learn_fix(NO_PYTEST, "bin/test sympy", agent_id=AGENT)
    store.apply(m.id, helpful=False, agent_id=AGENT)  # no error, no advised task: the memory's own credit
    store.apply(m.id, helpful=False, agent_id=AGENT)
    store.apply(m.id, helpful=True, agent_id=AGENT)
    ev = store.fixes_for(NO_PYTEST, agent_id=AGENT)
    assert [(e.helpful, e.unhelpful) for e in ev] == [(1, 2)]
    assert ev[0].score == 1 + 0.25 * (1 - 2)


def test_a_three_letter_value_named_by_the_fix_binds_it(store):
    store.learn_fix("ModuleNotFoundError: No module named 'six'", "pip install six", agent_id=AGENT)
    assert [m.content for m in store.on_task_error(TASK, "ModuleNotFoundError: No module named 'six'").fixes] == [
        "pip install six"
    ]
    assert store.on_task_error(TASK, "ModuleNotFoundError: No module named 'attr'").fixes == []


def test_a_link_keeps_the_decisive_line_not_the_whole_excerpt(tmp_path, clock):
    # a similar error is compared by its decisive line with the key frame, and by its failure block (the frame's lines
    # and the decisive line; migration 0027), never by the whole traceback: the link is as similar as the nearer text
    tb = 'Traceback (most recent call last):\n  File "sync.py", line 3, in <module>\n    replicate(primary)\n'
    taught = tb + "ConnectionResetError: peer reset the replication stream of primary shard alpha"
    asked = tb + "ConnectionResetError: peer reset the replication stream of primary shard alpha again"
    with MemoryStore(
        tmp_path / "s.db", settings=Settings(fix_similar_min=0.5, fix_similar_breadth=None), clock=clock
    ) as s:
        s.learn_fix(taught, "restart the replica with --resync", agent_id=AGENT)
        assert s.error_signature(taught).id != s.error_signature(asked).id
        link = s._core.backend.execute("SELECT error_message FROM fix_links").fetchone()[0]
        assert (
            link
            == "ConnectionResetError: peer reset the replication stream of primary shard alpha (at sync.py:<module>)"
        )
        ev = s.on_task_error(TASK, asked).fix_evidence
        line_taught = {"connectionreseterror", "peer", "reset", "the", "replication", "stream", "of", "primary"}
        line_taught |= {"shard", "alpha", "at", "sync", "py", "module"}  # and the key frame, sync.py:<module>
        block_taught = (line_taught - {"at"}) | {"file", "line", "in", "replicate"}  # the frame's two lines
        by_line = len(line_taught) / len(line_taught | {"again"})
        by_block = len(block_taught) / len(block_taught | {"again"})
        assert [e.level for e in ev] == ["similar"] and abs(ev[0].similarity - max(by_line, by_block)) < 1e-9


def test_a_similar_error_of_four_words_is_comparable(tmp_path, clock):
    with MemoryStore(
        tmp_path / "s.db", settings=Settings(fix_similar_min=0.6, fix_similar_breadth=None), clock=clock
    ) as s:
        s.learn_fix("ReplicaLagError: shard alpha stalled", "promote the standby", agent_id=AGENT)
        asked = "ReplicaLagError: shard alpha stalled again"
        assert s.error_signature(asked).id != s.error_signature("ReplicaLagError: shard alpha stalled").id
        ev = s.on_task_error(TASK, asked).fix_evidence
        assert [(e.level, round(e.similarity, 2)) for e in ev] == [("similar", 0.8)]


def test_one_loosely_similar_error_is_not_enough_two_are(tmp_path, clock):
    asked = "ConnectionResetError: peer reset the replication stream of primary shard gamma while idle"
    first = "ConnectionResetError: peer reset the replication stream of primary shard alpha"
    second = "ConnectionResetError: peer reset the replication stream of primary shard beta now"
    with MemoryStore(tmp_path / "s.db", settings=Settings(fix_similar_min=0.6), clock=clock) as s:
        s.learn_fix(first, "restart the replica with --resync", agent_id=AGENT)
        assert s.on_task_error(TASK, asked).fixes == []  # similarity 0.77: one such error is a guess
        s.learn_fix(second, "restart the replica with --resync", agent_id=AGENT)
        ev = s.on_task_error(TASK, asked).fix_evidence
        assert [(e.level, e.worked) for e in ev] == [("similar", 2)]


def test_category_level_at_its_lowest_setting_takes_one_fixed_error(db, clock):
    with MemoryStore(db, settings=Settings(fix_general_min=1), clock=clock) as s:
        s.learn_fix("curl: (6) Could not resolve host: mirror.example.org", "retry with backoff", agent_id=AGENT)
        ev = s.on_task_error(TASK, "ConnectionResetError: [Errno 104] Connection reset by peer").fix_evidence
        assert [(e.level, e.worked, e.memory.content) for e in ev] == [("general", 1, "retry with backoff")]


def test_a_credit_for_an_aliased_error_lands_on_its_link(store, monkeypatch):
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)  # generalise on the first difference (method 24 waits for 4)
    t2_error = "deploy blocked by lock red green blue black on main"
    store.error_signature("deploy blocked by lock alpha beta gamma delta on main")
    store.learn_fix(t2_error, "lockctl clear --stale", agent_id=AGENT)
    store.error_signature("deploy blocked by lock kappa lambda mu delta on main")
    store.error_signature("deploy blocked by lock kappa lambda mu sigma on main")
    got = store.on_task_error(TASK, t2_error)
    assert [e.level for e in got.fix_evidence] == ["alias"]
    store.apply(got.fixes[0].id, helpful=False, agent_id=AGENT, task_id=TASK["id"])
    store.apply(got.fixes[0].id, helpful=False, agent_id=AGENT, task_id=TASK["id"])
    got = store.on_task_error(TASK, t2_error)
    assert got.fixes == [] and [m.content for m in got.failures] == ["lockctl clear --stale"]
