"""Refuted for another instance (issue 19): one signature is shared by unrelated failures (a comparison whose values
the signature masks), and a fix refuted for one of them was refuted for errors like that one, not for every error of
the signature. Before, two unhelpful credits given where a bug's patch was shown for another bug's failure of the
same signature put the patch under "what did not work" for its own bug's later failures too (Defects4J: Time-26's
five later traces). A fix's link keeps the failure block of the error it was taught for, and the access log the block
of the error each advice and credit was for (migration 0026); ``fixes.rank`` leaves out an unhelpful credit when the
asked error's block is nearer the block the fix worked for than the one it was refuted for, by more than
``Settings.fix_nearest_margin``. Both backends (the ``store`` fixture) where the fixture's settings suffice; a
hypothesis property on SQLite."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import older_export
from harness_memory import MemoryStore, Settings
from harness_memory.fixes import INSTANCE_CHARS, instance_line, instance_text

AGENT = "coder"
FIX = "patch DateTimeZone: keep the offset across the DST overlap"
# two kinds of failure of one test (one signature: the compared values are masked): the fix's own, DST offsets ...
OWN = [
    "expected:<...10-31T02:00:10.123+0[2]:00> but was:<...10-31T02:00:10.123+0[1]:00>",
    "expected:<...10-31T02:30:10.000+0[2]:00> but was:<...10-31T02:30:10.000+0[1]:00>",
    "expected:<...10-31T02:30:10.123+0[2]:00> but was:<...10-31T02:30:10.123+0[1]:00>",
    "expected:<...10-31T01:30:10.000+0[2]:00> but was:<...10-31T01:30:10.000+0[1]:00>",
]
# ... and another bug's, periods
OTHER = [
    "expected:<[P1Y2M]> but was:<[P14M]>",
    "expected:<[P2Y3M]> but was:<[P27M]>",
    "expected:<[P3Y1M]> but was:<[P37M]>",
    "expected:<[P4Y5M]> but was:<[P53M]>",
]
_task = itertools.count()


@pytest.fixture
def settings():
    """The contract suite's store (both backends) with the opt-in rule on."""
    return Settings(fix_instance_credits=True)


ON = Settings(fix_instance_credits=True)


def trace(message: str, line: int = 12) -> str:
    return (
        f"junit.framework.ComparisonFailure: {message}\n"
        "\tat junit.framework.Assert.assertEquals(Assert.java:81)\n"
        f"\tat org.joda.time.TestDateTimeZoneCutover.testOverlap(TestDateTimeZoneCutover.java:{line})\n"
        "\tat junit.framework.TestCase.runTest(TestCase.java:176)\n"
    )


def ask(store, message: str, line: int = 30):
    """An advice for a task of its own (a credit in one task keeps the fix from that task: not what is tested)."""
    n = next(_task)
    return f"T-{n}", store.on_task_error({"id": f"T-{n}", "title": f"job {n}", "agent_id": AGENT}, trace(message, line))


def offered(advice) -> list[str]:
    return [m.content for m in advice.fixes]


def refute(store, messages) -> None:
    """The fix is shown for each of ``messages``'s failures and credited unhelpful there."""
    for k, msg in enumerate(messages):
        task, shown = ask(store, msg, 20 + k)
        assert offered(shown) == [FIX], msg
        store.apply(shown.fixes[0].id, helpful=False, agent_id=AGENT, task_id=task)


def teach(store, n: int = 2):
    """The fix taught for the first ``n`` DST failures (one memory: the same text); returns it."""
    return [store.learn_success(AGENT, FIX, error=trace(OWN[k], 12 + k)) for k in range(n)][-1]


def test_the_failures_share_one_signature(store):
    assert len({store.error_signature(trace(m)).id for m in OWN + OTHER}) == 1


def test_refuted_for_another_instance_the_fix_still_comes_back_for_its_own(store):
    teach(store)
    refute(store, OTHER[:2])
    _, own = ask(store, OWN[2])
    assert offered(own) == [FIX]
    assert (own.fix_evidence[0].worked, own.fix_evidence[0].unhelpful) == (2, 0)
    _, other = ask(store, OTHER[2])  # an instance like the refuted ones: still what did not work
    assert offered(other) == [] and [m.content for m in other.failures] == [FIX]


def test_every_credit_counts_when_the_setting_is_off_as_by_default(tmp_path):
    assert Settings().fix_instance_credits is False
    with MemoryStore(tmp_path / "m.db") as s:
        teach(s)
        refute(s, OTHER[:2])
        _, own = ask(s, OWN[2])
        assert offered(own) == [] and [m.content for m in own.failures] == [FIX]


def test_a_credit_given_for_an_instance_like_the_asked_one_counts(store):
    """Refuted for a failure whose message is the asked one's: the refutation stands. (One refuted for a DST failure
    farther from the asked one than the fix's own taught failure, by more than the margin, does not: see
    ``test_offered_for_its_own_kind_by_the_credits_given_there``.)"""
    teach(store)
    refute(store, [OWN[2], OWN[2]])
    _, again = ask(store, OWN[2], 40)
    assert offered(again) == []


def test_the_links_and_the_access_log_keep_the_instance_of_each_error(store):
    teach(store)
    refute(store, OTHER[:1])
    rows = store._core.backend.execute(
        "SELECT access_type, error_line, error_instance FROM memory_access_log "
        "WHERE access_type IN ('query', 'applied') AND error_signature IS NOT NULL ORDER BY id"
    ).fetchall()
    sig = store.error_signature(trace(OTHER[0], 20))
    line, block = instance_line(sig), instance_text(sig)
    assert [tuple(r) for r in rows] == [("query", line, block), ("applied", line, block)]
    assert line == "junit.framework.ComparisonFailure: expected:<[P1Y2M]> but was:<[P14M]>"
    assert block.startswith(line)
    assert "TestDateTimeZoneCutover.java:20)" in block  # the frames, with their line numbers
    (link,) = store._core.backend.execute("SELECT error_instance FROM fix_links").fetchone()
    assert link == instance_text(store.error_signature(trace(OWN[0], 12)))  # the first error it was taught for


def test_a_credit_given_with_the_error_keeps_that_error_s_block(store):
    m = store.learn_success(AGENT, FIX, error=trace(OWN[0]))
    store.apply(m.id, helpful=False, agent_id=AGENT, error=trace(OTHER[3]))
    line, instance = store._core.backend.execute(
        "SELECT error_line, error_instance FROM memory_access_log WHERE access_type = 'applied'"
    ).fetchone()
    sig = store.error_signature(trace(OTHER[3]))
    assert (line, instance) == (instance_line(sig), instance_text(sig))


def test_a_long_block_is_kept_to_its_first_characters(store):
    sig = store.error_signature(trace("expected:<[" + "x" * 3000 + "]> but was:<[y]>"))
    assert len(instance_text(sig)) == len(instance_line(sig)) == INSTANCE_CHARS


def test_export_and_import_keep_each_credit_s_instance(store, tmp_path):
    teach(store)
    refute(store, OTHER[:2])
    out = tmp_path / "export.jsonl"
    store.export_jsonl(out)
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert records[0]["version"] == 5
    assert sum(1 for r in records if r.get("record") == "access" and {"error_line", "error_instance"} <= set(r)) == 4
    assert [ln["error_instance"] is not None for r in records for ln in r.get("fix_links", [])] == [True]
    with MemoryStore(tmp_path / "copy.db", settings=ON) as other:
        other.import_jsonl(out)
        other.import_jsonl(out)  # twice: nothing added
        assert offered(ask(other, OWN[2])[1]) == [FIX]
        assert offered(ask(other, OTHER[2])[1]) == []


def test_a_format_4_export_imported_again_adds_no_access_rows(store, tmp_path):
    """An export written before access records and links carried the error's block matches the store's rows on the fields it
    has; the credits it brings, if new, count as before (everywhere)."""
    teach(store)
    refute(store, OTHER[:2])
    out = tmp_path / "export.jsonl"
    store.export_jsonl(out)
    legacy = tmp_path / "v4.jsonl"  # a format-4 file: no lines or blocks on access records or on links
    older_export(out, legacy, 4, access=("error_line", "error_instance"), links=("error_instance",))
    count = "SELECT COUNT(*) FROM memory_access_log"
    before = store._core.backend.execute(count).fetchone()[0]
    store.import_jsonl(legacy)
    assert store._core.backend.execute(count).fetchone()[0] == before
    with MemoryStore(tmp_path / "fresh.db", settings=ON) as fresh:  # into a new store: the credits carry no block
        fresh.import_jsonl(legacy)
        assert (
            fresh._core.backend.execute(
                "SELECT COUNT(*) FROM memory_access_log WHERE error_line IS NOT NULL OR error_instance IS NOT NULL"
            ).fetchone()[0]
            == 0
        )
        assert offered(ask(fresh, OWN[2])[1]) == []  # ... nor its links: every credit counts, as before


@pytest.mark.parametrize("field", ["error_line", "error_instance"])
@pytest.mark.parametrize("bad", [7, ["x"], "x" * 4001])
def test_an_access_record_with_a_bad_line_or_block_is_refused_and_changes_nothing(store, tmp_path, bad, field):
    teach(store, 1)
    refute(store, [])
    _, shown = ask(store, OWN[1])
    store.apply(shown.fixes[0].id, helpful=True, agent_id=AGENT, task_id="T-x")
    out = tmp_path / "export.jsonl"
    store.export_jsonl(out)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    for r in lines:
        if r.get("record") == "access":
            r[field] = bad
            break
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(json.dumps(x) + "\n" for x in lines))
    from harness_memory.errors import ImportFormatError

    with MemoryStore(tmp_path / "other.db") as other:
        with pytest.raises(ImportFormatError, match=field):
            other.import_jsonl(broken)
        assert other.stats()["memories"] == 0


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(credits=st.lists(st.tuples(st.sampled_from(["own", "other"]), st.booleans()), max_size=5))
def test_offered_for_its_own_kind_by_the_credits_given_there(tmp_path_factory, credits):
    """Taught twice for DST failures; credits given for the asked DST failure's very message or for period failures: the
    asked DST failure is offered the fix exactly when the teaching, the helpful credits and the unhelpful credits
    given for its message net at least 0.5 (the unhelpful credits given for period failures are another instance's); a
    period failure counts them all."""
    with MemoryStore(tmp_path_factory.mktemp("inst") / "m.db", settings=ON) as s:
        m = teach(s)
        for k, (kind, helpful) in enumerate(credits):
            msg = OWN[2] if kind == "own" else OTHER[2 + k % 2]
            s.apply(m.id, helpful=helpful, agent_id=AGENT, error=trace(msg, 40 + k))
        here = 2 + sum(1 if h else -1 for kind, h in credits if kind == "own" or h)
        everywhere = 2 + sum(1 if h else -1 for _kind, h in credits)
        assert (offered(ask(s, OWN[2], 60)[1]) == [FIX]) == (here >= 0.5), credits
        assert (offered(ask(s, OTHER[1], 61)[1]) == [FIX]) == (everywhere >= 0.5), credits


def test_each_credit_of_another_instance_is_left_out_once_and_the_others_stay(store):
    """Three unhelpful credits, one given for a period failure and two for the asked DST failure's own message: only the
    first is left out (net 2 - 2: under what did not work); a count of two for it would offer the fix."""
    teach(store)
    refute(store, [OTHER[0]])
    m = store.recall(FIX, agent_id=AGENT, limit=1, record=False)[0].memory
    for k in range(2):
        store.apply(m.id, helpful=False, agent_id=AGENT, error=trace(OWN[2], 40 + k))
    _, own = ask(store, OWN[2])
    assert offered(own) == [] and [m.content for m in own.failures] == [FIX]


def test_two_refuted_fixes_of_one_signature_are_judged_together(store):
    """Two fixes of the signature, each taught twice for its own kind of failure and each refuted for the other's:
    each comes back for its own kind (one query reads both fixes' credits)."""
    other_fix = "patch Period: normalise months into years"
    for k in range(2):
        store.learn_success(AGENT, FIX, error=trace(OWN[k], 12 + k))
        store.learn_success(AGENT, other_fix, error=trace(OTHER[k], 14 + k))
    fixes = {
        m.content: m
        for m in (store.recall(t, agent_id=AGENT, limit=1, record=False)[0].memory for t in (FIX, other_fix))
    }
    for k in range(2):
        store.apply(fixes[FIX].id, helpful=False, agent_id=AGENT, error=trace(OTHER[2 + k], 30 + k))
        store.apply(fixes[other_fix].id, helpful=False, agent_id=AGENT, error=trace(OWN[2 + k], 32 + k))
    assert offered(ask(store, OWN[2], 50)[1]) == [FIX]
    assert offered(ask(store, OTHER[2], 51)[1]) == [other_fix]


def test_a_credit_the_origin_rule_left_out_is_not_left_out_twice(store):
    """A fix taught in one test class, refuted there for the asked failure's own message and refuted in another test class
    for another instance: asked from its own class, the other class's credit is the origin rule's to leave out, once;
    the refutation given in its own class for this very message stands (net 2 - 2)."""
    teach(store)
    m = store.recall(FIX, agent_id=AGENT, limit=1, record=False)[0].memory
    elsewhere = trace(OTHER[0], 70).replace("TestDateTimeZoneCutover", "TestPeriodFormat")
    store.apply(m.id, helpful=False, agent_id=AGENT, error=elsewhere)
    for k in range(2):
        store.apply(m.id, helpful=False, agent_id=AGENT, error=trace(OWN[2], 40 + k))
    _, own = ask(store, OWN[2])
    assert offered(own) == [] and [x.content for x in own.failures] == [FIX]


def frames(message: str, helper_lines: tuple[int, int], test: str, line: int) -> str:
    """A JUnit failure raised through the test class's helper: the helper's line numbers say which version of the test
    class failed (one checkout, one set of numbers), the test method which test."""
    a, b = helper_lines
    return (
        f"junit.framework.AssertionFailedError: {message}\n"
        "\tat junit.framework.Assert.fail(Assert.java:57)\n"
        f"\tat com.example.TypeCheckTest.testTypes(TypeCheckTest.java:{a})\n"
        f"\tat com.example.TypeCheckTest.testTypes(TypeCheckTest.java:{b})\n"
        f"\tat com.example.TypeCheckTest.{test}(TypeCheckTest.java:{line})\n"
    )


def test_when_the_lines_are_alike_the_blocks_tell_the_instances_apart(store):
    """The same message ('expected a warning') from two versions of one test class: a fix taught twice for failures of
    one version, refuted twice for failures of the other; a later failure of the first version gets it back (its
    frames are the taught ones'), a later failure of the second does not."""
    mine, theirs = (8977, 8957), (7294, 7274)
    for k in range(2):
        store.learn_success(AGENT, FIX, error=frames("expected a warning", mine, f"testThisType{k}", 4553 + 8 * k))
    for k in range(2):
        task, shown = ask_text(store, frames("expected a warning", theirs, f"testArguments{k}", 1362 + 9 * k))
        assert offered(shown) == [FIX]
        store.apply(shown.fixes[0].id, helpful=False, agent_id=AGENT, task_id=task)
    assert offered(ask_text(store, frames("expected a warning", mine, "testThisType7", 4609))[1]) == [FIX]
    assert offered(ask_text(store, frames("expected a warning", theirs, "testArguments7", 1430))[1]) == []


def ask_text(store, text: str):
    n = next(_task)
    return f"T-{n}", store.on_task_error({"id": f"T-{n}", "title": f"job {n}", "agent_id": AGENT}, text)


def test_a_link_s_line_compares_as_the_asked_error_s(store):
    """A link keeps its error's line with the key frame appended (``link_text``); compared as an instance, the frame is
    dropped, so the same error's line is the same instance."""
    from harness_memory.fixes import _folded_line, link_text

    for message in (OWN[0], OTHER[1]):
        sig = store.error_signature(trace(message))
        assert sig.frame and link_text(sig).endswith(f"(at {sig.frame})")
        assert _folded_line(link_text(sig)) == instance_line(sig)


def test_a_link_without_a_block_leaves_the_tie_to_the_credits(store):
    """A link written before the blocks were kept (its error_instance NULL): where the lines are alike, nothing says
    which instance is nearer, and every credit counts."""
    mine, theirs = (8977, 8957), (7294, 7274)
    for k in range(2):
        store.learn_success(AGENT, FIX, error=frames("expected a warning", mine, f"testThisType{k}", 4553 + 8 * k))
    with store._core.backend.write() as c:
        c.execute("UPDATE fix_links SET error_instance = NULL")
    for k in range(2):
        task, shown = ask_text(store, frames("expected a warning", theirs, f"testArguments{k}", 1362 + 9 * k))
        store.apply(shown.fixes[0].id, helpful=False, agent_id=AGENT, task_id=task)
    assert offered(ask_text(store, frames("expected a warning", mine, "testThisType7", 4609))[1]) == []
