"""Edges of the fix ranking (issue 19) that the other fix tests do not reach: ids of links and of
memories that differ, the order of the task and origin tiers when both saw the asked task, the
limit, and the shortest error the similar tier compares. Both backends where a store is enough
(the ``store`` fixture)."""

from __future__ import annotations

from harness_memory import MemoryStore, Settings

AGENT = "coder"
ERROR = (
    "junit.framework.AssertionFailedError: expected:<3> but was:<4>\n"
    "\tat junit.framework.Assert.fail(Assert.java:47)\n"
    "\tat org.example.parser.ParserTest.testNested(ParserTest.java:88)\n"
)
PATCHES = ["patch PARSER-12: ParserTest", "patch PARSER-31: ParserTest", "patch PARSER-40: ParserTest"]
TASK = {"id": "T-1", "title": "parser tests", "agent_id": AGENT}


def trace(exc: str, origin: str, inner: str = "django/db/models/query.py") -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/testbed/{origin}", line 12, in <module>\n'
        "    main()\n"
        f'  File "/testbed/{inner}", line 433, in get\n'
        "    raise self.model.DoesNotExist\n"
        f"{exc}"
    )


def test_an_unpredictive_error_stays_quiet_when_link_and_memory_ids_differ(store):
    # memories written before the fixes shift the memories' ids away from the links' ids
    for k in range(3):
        store.remember(f"the parser keeps a token cache of size {k}", agent_id=AGENT, type="decision")
    mems = [store.learn_fix(ERROR, p, agent_id=AGENT) for p in PATCHES]
    links = [row[0] for row in store._core.backend.execute("SELECT id FROM fix_links ORDER BY id").fetchall()]
    assert {m.id for m in mems}.isdisjoint(links)  # the premise: no link id equals a fix's memory id
    assert store.on_task_error(TASK, ERROR).fixes == []
    assert store.fixes_for(ERROR, agent_id=AGENT) == []
    # and the first repeat brings them back
    store.learn_fix(ERROR, PATCHES[0], agent_id=AGENT)
    assert [m.content for m in store.on_task_error(TASK, ERROR).fixes][0] == PATCHES[0]


def test_the_task_tier_ranks_before_the_origin_tier_even_when_both_saw_the_task(db, clock):
    run = "python tests/runtests.py queries"
    origin_fix = "python reproduce.py"
    with MemoryStore(db, settings=Settings(fix_task_min=2, fix_origin_min=2), clock=clock) as s:
        # the task's fix: two errors of the task, weaker evidence than the origin's fix
        for exc in ("KeyError: 'tz'", "ValueError: bad literal 'x'"):
            s.learn_fix(trace(exc, "tests/runtests.py"), run, agent_id=AGENT, task=run)
        # the origin's fix: three errors that started in reproduce.py, one of them while running the task
        s.learn_fix(trace("TypeError: unsupported operand", "reproduce.py"), origin_fix, agent_id=AGENT, task=run)
        for exc in ("AttributeError: no attribute 'plan'", "LookupError: no such app"):
            s.learn_success(AGENT, origin_fix, error=trace(exc, "reproduce.py"))
        new = trace("IndexError: list index out of range", "reproduce.py", inner="django/template/base.py")
        got = s.on_task_error({"id": "T-2", "title": run, "agent_id": AGENT}, new)
        assert [(e.level, e.memory.content) for e in got.fix_evidence] == [("task", run), ("origin", origin_fix)]
        assert got.fix_evidence[1].score > got.fix_evidence[0].score  # the tier decides, not the score


def test_fixes_for_keeps_to_its_limit(store):
    for p in PATCHES[:2]:
        store.learn_fix(ERROR, p, agent_id=AGENT)
        store.learn_fix(ERROR, p, agent_id=AGENT)
    assert len(store.fixes_for(ERROR, agent_id=AGENT)) == 2
    assert [e.memory.content for e in store.fixes_for(ERROR, agent_id=AGENT, limit=1)] in ([PATCHES[0]], [PATCHES[1]])
    store.learn_fix(ERROR, PATCHES[2], agent_id=AGENT, worked=False)
    store.learn_fix("junit.framework.AssertionFailedError: other", PATCHES[2], agent_id=AGENT, worked=False)
    assert len(store.on_task_error(TASK, ERROR, limit=1).failures) <= 1


def test_an_asked_error_of_exactly_the_shortest_comparable_length_finds_a_similar_one(tmp_path, clock):
    with MemoryStore(
        tmp_path / "s.db", settings=Settings(fix_similar_min=0.6, fix_similar_breadth=None), clock=clock
    ) as s:
        s.learn_fix("ReplicaLagError: shard alpha stalled again", "promote the standby", agent_id=AGENT)
        asked = "ReplicaLagError: shard alpha stalled"  # four words: SIMILAR_MIN_WORDS
        assert s.error_signature(asked).id != s.error_signature("ReplicaLagError: shard alpha stalled again").id
        ev = s.on_task_error(TASK, asked).fix_evidence
        assert [(e.level, round(e.similarity, 2)) for e in ev] == [("similar", 0.8)]
