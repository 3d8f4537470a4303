"""A fix found only through a similar error is offered when it carried over between errors (issue 19).

``Settings.fix_similar_min`` finds the fixes of linked errors whose decisive line is nearly the asked one's;
``Settings.fix_similar_breadth`` keeps, of those, the kinds that worked for that many distinct error signatures.
A re-run or a reinstall that fixed two different errors is a remedy that carries over; a patch known for one bug's
failure is that bug's, and another failure that only looks like it is, as often as not, another bug
(docs/fixes.md, "Similar errors, and fixes that carry over"). Contract tests: every backend.
"""

from __future__ import annotations

from harness_memory import MemoryStore, Settings

AGENT = "coder"
TASK = {"id": "T-31", "title": "replicate the shard", "agent_id": AGENT}

# three failures worded alike, each its own signature (a word differs where no variable was seen)
ALPHA = "ReplicaLagError: replication stream of primary shard alpha stalled on node east"
BETA = "ReplicaLagError: replication stream of primary shard beta stalled on node west"
GAMMA = "ReplicaLagError: replication stream of primary shard gamma stalled on node north"


def _signatures_differ(s: MemoryStore) -> None:
    ids = {s.error_signature(e).id for e in (ALPHA, BETA, GAMMA)}
    assert len(ids) == 3, "the three failures must be three signatures for the similar tier to be what answers"


def test_the_defaults_offer_a_fix_through_a_similar_error_only_when_it_carried_over(db, clock):
    assert Settings().fix_similar_min is not None and Settings().fix_similar_breadth == 2
    with MemoryStore(db, clock=clock) as s:
        for _ in range(2):  # backed twice (one loosely similar error is not a guess then), for one error
            s.learn_fix(ALPHA, "apply patch REPL-12 to the stream reader", agent_id=AGENT)
        _signatures_differ(s)
        # one error fixed by it: a patch of that failure, not of one that looks like it
        assert s.on_task_error(TASK, GAMMA).fixes == []
        s.learn_fix(BETA, "restart the replica with --resync", agent_id=AGENT)
        s.learn_fix(ALPHA, "restart the replica with --resync", agent_id=AGENT)
        got = s.on_task_error(TASK, GAMMA)
        # the resync fixed two distinct errors: it carries over; the patch still fixed one
        assert [m.content for m in got.fixes] == ["restart the replica with --resync"]
        assert got.fix_evidence[0].level == "similar" and got.fix_evidence[0].worked == 2


def test_without_the_breadth_condition_a_one_error_fix_is_offered_for_a_similar_error(db, clock):
    with MemoryStore(db, settings=Settings(fix_similar_min=0.4, fix_similar_breadth=None), clock=clock) as s:
        s.learn_fix(ALPHA, "apply patch REPL-12 to the stream reader", agent_id=AGENT)
        s.learn_fix(ALPHA, "apply patch REPL-12 to the stream reader", agent_id=AGENT)  # backed twice: not a guess
        got = s.on_task_error(TASK, GAMMA).fix_evidence
        assert [(e.level, e.memory.content) for e in got] == [("similar", "apply patch REPL-12 to the stream reader")]


def test_breadth_counts_distinct_errors_not_teachings(db, clock):
    with MemoryStore(db, settings=Settings(fix_similar_min=0.4, fix_similar_breadth=2), clock=clock) as s:
        for _ in range(4):  # the same error, four times
            s.learn_fix(ALPHA, "restart the replica with --resync", agent_id=AGENT)
        assert s.on_task_error(TASK, GAMMA).fixes == []
        s.learn_fix(BETA, "restart the replica with --resync", agent_id=AGENT)
        assert [m.content for m in s.on_task_error(TASK, GAMMA).fixes] == ["restart the replica with --resync"]


def test_an_error_it_did_not_fix_adds_no_breadth(db, clock):
    with MemoryStore(db, settings=Settings(fix_similar_min=0.4, fix_similar_breadth=2), clock=clock) as s:
        for _ in range(2):
            s.learn_fix(ALPHA, "restart the replica with --resync", agent_id=AGENT)
        s.learn_fix(BETA, "restart the replica with --resync", agent_id=AGENT, worked=False)
        assert s.on_task_error(TASK, GAMMA).fixes == []


def test_breadth_counts_variants_of_one_kind_together(db, clock):
    with MemoryStore(db, settings=Settings(fix_similar_min=0.4, fix_similar_breadth=2), clock=clock) as s:
        # two texts of one kind (the paths are its targets): together they fixed two errors
        s.learn_fix(ALPHA, "resync --replica /srv/replicas/alpha.conf", agent_id=AGENT)
        s.learn_fix(BETA, "resync --replica /srv/replicas/beta.conf", agent_id=AGENT)
        ev = s.on_task_error(TASK, GAMMA).fix_evidence
        assert [(e.level, e.variants) for e in ev] == [("similar", 2)]


def test_breadth_counts_only_what_the_asking_agent_may_see(db, clock):
    with MemoryStore(db, settings=Settings(fix_similar_min=0.4, fix_similar_breadth=2), clock=clock) as s:
        for _ in range(2):
            s.learn_fix(ALPHA, "restart the replica with --resync", agent_id=AGENT)
        s.learn_fix(BETA, "restart the replica with --resync", agent_id="someone-else")  # private to them
        assert s.on_task_error(TASK, GAMMA).fixes == []
        other = {**TASK, "agent_id": "someone-else"}
        assert s.on_task_error(other, GAMMA).fixes == []  # they see one error fixed too (ALPHA's is private)
        s.learn_fix(BETA, "restart the replica with --resync", agent_id=AGENT)
        assert [m.content for m in s.on_task_error(TASK, GAMMA).fixes] == ["restart the replica with --resync"]


def test_the_environment_turns_the_similar_tier_and_its_condition_off(monkeypatch):
    monkeypatch.setenv("HARNESS_MEMORY_FIX_SIMILAR_MIN", "off")
    monkeypatch.setenv("HARNESS_MEMORY_FIX_SIMILAR_BREADTH", "none")
    s = Settings()
    assert (s.fix_similar_min, s.fix_similar_breadth) == (None, None)
    monkeypatch.setenv("HARNESS_MEMORY_FIX_SIMILAR_MIN", "0.5")
    monkeypatch.setenv("HARNESS_MEMORY_FIX_SIMILAR_BREADTH", "3")
    s = Settings()
    assert (s.fix_similar_min, s.fix_similar_breadth) == (0.5, 3)


def test_a_fix_without_a_kind_counts_the_errors_of_its_own_memory(db, clock):
    # a fix memory whose kind was never computed (written before fix kinds, migration 0006) stands for itself
    with MemoryStore(db, settings=Settings(fix_similar_min=0.4, fix_similar_breadth=2), clock=clock) as s:
        m = s.learn_fix(ALPHA, "restart the replica with --resync", agent_id=AGENT)
        s.learn_fix(ALPHA, "restart the replica with --resync", agent_id=AGENT)
        with s._core.backend.write() as c:
            c.execute("UPDATE memories SET fix_kind = NULL WHERE id = ?", (m.id,))
        assert s.on_task_error(TASK, GAMMA).fixes == []  # one error: not carried over
        s.learn_fix(BETA, "restart the replica with --resync", agent_id=AGENT)  # the same memory: two errors now
        with s._core.backend.write() as c:
            c.execute("UPDATE memories SET fix_kind = NULL WHERE id = ?", (m.id,))
        got = s.on_task_error(TASK, GAMMA)
        assert [x.id for x in got.fixes] == [m.id] and got.fix_evidence[0].level == "similar"


def test_the_search_is_given_the_longest_words_of_a_long_error():
    from harness_memory.fixes import SEARCH_TERMS, _search_terms

    short = {f"w{k}" for k in range(SEARCH_TERMS)}
    assert _search_terms(short) == sorted(short)
    long = short | {f"identifier_{k:03d}" for k in range(SEARCH_TERMS)}
    assert _search_terms(long) == sorted(f"identifier_{k:03d}" for k in range(SEARCH_TERMS))


def test_a_fix_that_never_worked_is_not_brought_in_by_a_similar_error(db, clock):
    # breadth counts the errors a kind worked for: one that only failed has none, even where one error is enough; it
    # is not listed under what did not work for an error that only looks like the one it failed for
    taught, asked = "ReplicaLagError: shard alpha stalled", "ReplicaLagError: shard alpha stalled again"
    with MemoryStore(db, settings=Settings(fix_similar_min=0.4, fix_similar_breadth=1), clock=clock) as s:
        s.learn_fix(taught, "restart the replica with --resync", agent_id=AGENT, worked=False)
        assert s.error_signature(taught).id != s.error_signature(asked).id
        got = s.on_task_error(TASK, asked)
        assert got.fixes == [] and got.failures == []
        s.learn_fix(taught, "promote the standby", agent_id=AGENT)
        assert [m.content for m in s.on_task_error(TASK, asked).fixes] == ["promote the standby"]


def test_two_signatures_the_miner_linked_are_one_error_to_breadth(db, clock):
    with MemoryStore(db, clock=clock) as s:
        for e in (ALPHA, BETA):
            s.learn_fix(e, "restart the replica with --resync", agent_id=AGENT)
        assert [m.content for m in s.on_task_error(TASK, GAMMA).fixes] == ["restart the replica with --resync"]
        alpha, beta = s.error_signature(ALPHA).id, s.error_signature(BETA).id
        with s._core.backend.write() as c:  # the template miner joined them later: one error, two ids
            c.execute(
                "INSERT INTO error_signature_links(sig, canonical, linked_at) VALUES (?, ?, ?)", (beta, alpha, clock())
            )
        assert s.on_task_error(TASK, GAMMA).fixes == []
