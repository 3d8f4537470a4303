"""Fixes of the same origin (issue 19): a link keeps where its error's run started (the outermost
application frame of the stack trace, ``ErrorSignature.origin``), and a fix that repaired several
failures starting there comes back for a new failure starting there, with no task given (the
issue's own protocol: ``learn_success(agent, repair, error=output)``). Both backends (the ``store``
fixture); abstention, ordering, credits and export/import kept."""

from __future__ import annotations

import pytest

from harness_memory import MemoryStore, Settings

AGENT = "coder"
FIX = "python reproduce.py"


def trace(exc: str, origin: str = "reproduce.py", inner: str = "django/db/models/query.py") -> str:
    """A Python traceback that starts in ``origin`` and fails inside the library code ``inner``."""
    return (
        "Traceback (most recent call last):\n"
        f'  File "/testbed/{origin}", line 12, in <module>\n'
        "    main()\n"
        f'  File "/testbed/{origin}", line 7, in main\n'
        "    run()\n"
        f'  File "/testbed/{inner}", line 433, in get\n'
        "    raise self.model.DoesNotExist\n"
        f"{exc}"
    )


ERRORS = [
    trace("KeyError: 'tz'"),
    trace("ValueError: invalid literal for int() with base 10: 'x'", inner="django/utils/dateparse.py"),
    trace("TypeError: unsupported operand type(s) for +: 'NoneType' and 'str'", inner="django/forms/fields.py"),
    trace("AttributeError: 'QuerySet' object has no attribute 'explain_plan'"),
]
NEW = trace("IndexError: list index out of range", inner="django/template/base.py")


@pytest.fixture
def settings():
    """The store fixture's settings with the tier's minimum at 2 (its default is checked below)."""
    return Settings(extra_types=["discovery", "deadend", "plan", "feedback", "insight"], fix_origin_min=2)


def ask(store, error, task_id="T-ask", title="django__django-11099"):
    # the harness's task is the whole run (an issue to solve), never the same twice
    return store.on_task_error({"id": task_id, "title": title, "agent_id": AGENT}, error)


def teach(store, fix, errors):
    for e in errors:
        store.learn_success(AGENT, fix, error=e)  # no task: the issue's own protocol


def test_the_origin_is_the_outermost_application_frame():
    with MemoryStore(":memory:") as s:
        assert s.error_signature(NEW).origin == "reproduce.py"
        # library frames before it are skipped
        lib = (
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3.11/runpy.py", line 198, in _run_module_as_main\n'
            '  File "/srv/app/tools/migrate.py", line 4, in <module>\n'
            '  File "/srv/app/app/db.py", line 9, in connect\n'
            "ConnectionError: refused"
        )
        assert s.error_signature(lib).origin == "migrate.py"
        java = (
            "java.lang.AssertionError: expected:<1> but was:<2>\n"
            "\tat org.junit.Assert.fail(Assert.java:88)\n"
            "\tat org.example.parser.Tokens.read(Tokens.java:40)\n"
            "\tat org.example.parser.TokensTest.readsTags(TokensTest.java:12)\n"
            "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
        )
        assert s.error_signature(java).origin == "org.example.parser.TokensTest"
        # three application frames: still the outermost (Java lists it last)
        deeper = java.replace(
            "\tat org.example.parser.TokensTest",
            "\tat org.example.parser.Reader.next(Reader.java:7)\n\tat org.example.parser.TokensTest",
        )
        assert s.error_signature(deeper).origin == "org.example.parser.TokensTest"
        # a name longer than any real file is cut to 300 characters
        long_name = "x" * 400 + ".py"
        very = NEW.replace("reproduce.py", long_name)
        assert s.error_signature(very).origin == long_name[:300]
        assert s.error_signature("npm ERR! missing script: test").origin is None
        assert s.error_signature("KeyError: 'tz'").origin is None


def test_a_fix_that_repaired_failures_of_one_origin_comes_back_for_a_new_one(store):
    teach(store, FIX, ERRORS[:2])
    got = ask(store, NEW)
    assert [m.content for m in got.fixes] == [FIX]
    ev = got.fix_evidence[0]
    assert ev.level == "origin" and ev.worked == 2 and ev.similarity == 0.5
    assert ev.explain().startswith("same origin (where the failing run started), other errors; worked 2x")
    assert 'level="origin"' in got.prompt
    # a failure that started in another script, and one without a stack trace: nothing
    assert ask(store, trace("IndexError: list index out of range", origin="check.py")).fixes == []
    assert ask(store, "IndexError: list index out of range").fixes == []


def test_one_earlier_repair_of_the_origin_is_not_enough(store):
    teach(store, FIX, ERRORS[:1])  # fix_origin_min is 2 here
    assert ask(store, NEW).fixes == []
    teach(store, FIX, ERRORS[1:2])
    assert ask(store, NEW).fixes != []


def test_the_same_error_twice_is_one_repaired_error(store):
    teach(store, FIX, [ERRORS[0], ERRORS[0]])
    assert ask(store, NEW).fixes == []


def test_the_error_s_own_fix_ranks_first_then_the_task_s_then_the_origin_s(db, clock):
    run = "python tests/runtests.py queries"
    with MemoryStore(db, settings=Settings(fix_task_min=2, fix_origin_min=2), clock=clock) as s:
        teach(s, FIX, ERRORS[:3])  # failures that started in reproduce.py, no task
        for e in ERRORS[:2]:  # the task's repairs, of failures that started in its own runner
            s.learn_fix(e.replace("reproduce.py", "tests/runtests.py"), run, agent_id=AGENT, task=run)
        s.learn_success(AGENT, "pip install -e .", error=NEW)  # fixed this very error
        got = ask(s, NEW, title=run)
        assert [e.level for e in got.fix_evidence] == ["exact", "task", "origin"]
        assert [m.content for m in got.fixes] == ["pip install -e .", run, FIX]
        assert [e.level for e in ask(s, NEW).fix_evidence] == ["exact", "origin"]  # another task


def test_credits_after_an_origin_advice_move_the_origin_ranking(store):
    other = "git checkout -- . && python reproduce.py"
    teach(store, FIX, ERRORS[:2])
    teach(store, other, ERRORS[1:4])
    got = ask(store, NEW, task_id="T-1")
    assert [m.content for m in got.fixes] == [other, FIX]  # 3 errors against 2
    by = {m.content: m.id for m in got.fixes}
    store.apply(by[FIX], helpful=True, agent_id=AGENT, task_id="T-1")
    store.apply(by[other], helpful=False, agent_id=AGENT, task_id="T-1")
    store.apply(by[other], helpful=False, agent_id=AGENT, task_id="T-1")
    # the same run again: what did not help it is not offered to it a second time (tests/test_fix_refuted_in_task.py)
    same = ask(store, trace("OSError: [Errno 2] No such file or directory: 'x.csv'"), task_id="T-1b")
    assert [m.content for m in same.fixes] == [FIX] and other in [m.content for m in same.failures]
    again = ask(store, trace("OSError: [Errno 2] No such file or directory: 'x.csv'"), task_id="T-2", title="run-2")
    assert [m.content for m in again.fixes] == [FIX, other]
    assert again.fix_evidence[0].helpful == 1 and again.fix_evidence[1].unhelpful == 2
    store.apply(by[other], helpful=False, agent_id=AGENT, task_id="T-2")
    # 3 repairs, 3 advices that did not help: no longer offered, listed under what did not work
    last = ask(store, trace("RuntimeError: maximum recursion depth exceeded"), task_id="T-3", title="run-3")
    assert [m.content for m in last.fixes] == [FIX]


def test_the_tier_is_off_without_a_minimum(db, clock):
    with MemoryStore(db, settings=Settings(fix_origin_min=None), clock=clock) as s:
        teach(s, FIX, ERRORS)
        assert ask(s, NEW).fixes == []


def test_by_default_an_origin_needs_five_repaired_errors(tmp_path, clock):
    more = ERRORS + [trace("RuntimeError: dictionary changed size during iteration", inner="django/apps/registry.py")]
    with MemoryStore(tmp_path / "default.db", clock=clock) as s:
        teach(s, FIX, more[:4])
        assert ask(s, NEW).fixes == []
        teach(s, FIX, more[4:5])
        assert [e.level for e in ask(s, NEW).fix_evidence] == ["origin"]


def test_export_and_import_keep_the_origin_of_each_link(store, tmp_path, clock):
    teach(store, FIX, ERRORS[:2])
    out = tmp_path / "export.jsonl"
    store.export_jsonl(out)
    with MemoryStore(tmp_path / "copy.db", settings=Settings(fix_origin_min=2), clock=clock) as other:
        other.import_jsonl(out)
        other.import_jsonl(out)
        got = ask(other, NEW)
        assert [m.content for m in got.fixes] == [FIX] and got.fix_evidence[0].level == "origin"
        assert got.fix_evidence[0].worked == 2


def test_a_resign_merge_keeps_the_task_and_origin_of_the_merged_link(store):
    """When a re-signing maps an old signature onto one the fix is already linked to, the counts add up
    and the task and origin that only the old link had are kept."""
    from harness_memory.jobs.resign import _move_links

    m = store.learn_success(AGENT, FIX, error="KeyError: 'tz'")  # no stack trace: no origin, no task
    b = store._core.backend
    (new,) = b.execute("SELECT error_signature FROM fix_links WHERE memory_id = ?", (m.id,)).fetchone()
    with b.write() as c:
        c.execute(
            "INSERT INTO fix_links(memory_id, error_signature, worked, failed, first_at, last_at, task_signature, "
            "error_origin) VALUES (?, 'err_0000000000000001', 2, 0, 0, 0, 'debug:run:low:reproduce', 'reproduce.py')",
            (m.id,),
        )
        _move_links(c, "err_0000000000000001", new)
    rows = b.execute(
        "SELECT error_signature, worked, task_signature, error_origin FROM fix_links WHERE memory_id = ?", (m.id,)
    ).fetchall()
    assert [tuple(r) for r in rows] == [(new, 3, "debug:run:low:reproduce", "reproduce.py")]
