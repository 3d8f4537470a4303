"""A credit is evidence where it was given (issue 19): a fix taught for a failure of one test class (the
error's origin, where its run started) and offered for another test class's failure with the same message,
then credited unhelpful there, is still that first test class's fix. Before, the one unhelpful credit put the
fix under "what did not work" for every error of the signature, its own included: on Defects4J a bug's own
patch stopped coming back for its later traces after another bug of the same message refuted it. Both
backends (the ``store`` fixture); the hypothesis property on SQLite."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import older_export
from harness_memory import MemoryStore

AGENT = "coder"
FIX = "patch Parser.parse: reject an empty string"


def trace(test: str, line: int = 12) -> str:
    """A JUnit failure of ``test`` thrown inside the code under test: one signature for every test class."""
    return (
        "java.lang.IllegalArgumentException: String must not be empty\n"
        "\tat org.example.Validate.notEmpty(Validate.java:92)\n"
        "\tat org.example.Parser.parse(Parser.java:40)\n"
        f"\tat org.example.{test}.testEmpty({test}.java:{line})\n"
        "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
        "\tat junit.framework.TestCase.runTest(TestCase.java:176)\n"
    )


def ask(store, test, task_id, line=30):
    return store.on_task_error({"id": task_id, "title": f"run {test}", "agent_id": AGENT}, trace(test, line))


def offered(advice) -> list[str]:
    return [m.content for m in advice.fixes]


def test_the_traces_share_one_signature_and_differ_in_origin(store):
    foo, bar = store.error_signature(trace("FooTest")), store.error_signature(trace("BarTest", 30))
    assert foo.id == bar.id
    assert (foo.origin, bar.origin) == ("org.example.FooTest", "org.example.BarTest")


def test_refuted_in_another_origin_the_fix_still_comes_back_in_its_own(store):
    store.learn_success(AGENT, FIX, error=trace("FooTest"))
    shown = ask(store, "BarTest", "T-1")
    assert offered(shown) == [FIX]  # the signature's fix, offered for another test class's failure
    store.apply(shown.fixes[0].id, helpful=False, agent_id=AGENT, task_id="T-1")  # it did not help there
    own = ask(store, "FooTest", "T-2", line=14)
    assert offered(own) == [FIX]
    ev = own.fix_evidence[0]
    assert (ev.worked, ev.unhelpful) == (1, 0)  # the credit from BarTest is not part of FooTest's evidence
    refuting = ask(store, "BarTest", "T-3", line=31)
    assert offered(refuting) == [] and [m.content for m in refuting.failures] == [FIX]
    third = ask(store, "BazTest", "T-4")  # never taught there: every credit counts, as before
    assert offered(third) == [] and [m.content for m in third.failures] == [FIX]


def test_a_credit_given_in_the_fix_s_own_origin_counts_there(store):
    store.learn_success(AGENT, FIX, error=trace("FooTest"))
    shown = ask(store, "FooTest", "T-1", line=20)
    store.apply(shown.fixes[0].id, helpful=False, agent_id=AGENT, task_id="T-1")
    assert offered(ask(store, "FooTest", "T-2", line=21)) == []


def test_helpful_credits_from_elsewhere_are_not_counted_in_the_fix_s_own_origin_either(store):
    m = store.learn_success(AGENT, FIX, error=trace("FooTest"))
    store.apply(m.id, helpful=True, agent_id=AGENT, error=trace("BarTest"))
    here = ask(store, "FooTest", "T-1").fix_evidence[0]
    there = ask(store, "BarTest", "T-2").fix_evidence[0]
    assert (here.helpful, there.helpful) == (0, 1)
    assert here.score < there.score


def test_a_link_made_only_by_a_credit_elsewhere_does_not_refute_the_kind_in_its_own_origin(store):
    """A fix credited for an error none of its links is of gets a link of its own (worked 0, unhelpful 1) with the
    credit's origin; a variant of the same kind later taught for that error in another origin is not refuted
    there by it."""
    a = store.learn_success(AGENT, "git apply fixes/a/parser.patch", error="KeyError: 'parser'")
    store.apply(a.id, helpful=False, agent_id=AGENT, error=trace("BarTest"))  # no link of a to this signature yet
    store.learn_success(AGENT, "git apply fixes/b/parser.patch", error=trace("FooTest"))  # the same kind
    assert offered(ask(store, "FooTest", "T-1")) == ["git apply fixes/b/parser.patch"]
    assert offered(ask(store, "BarTest", "T-2")) == []


def test_credits_logged_before_their_origin_was_count_everywhere(store):
    m = store.learn_success(AGENT, FIX, error=trace("FooTest"))
    store.apply(m.id, helpful=False, agent_id=AGENT, error=trace("BarTest"))
    with store._core.backend.write() as c:  # a credit given before the access log kept its error's origin
        c.execute("UPDATE memory_access_log SET error_origin = NULL WHERE access_type = 'applied'")
    assert offered(ask(store, "FooTest", "T-1")) == []


def test_an_error_without_an_origin_keeps_every_credit(store):
    plain = "ValueError: String must not be empty"  # no stack trace: no origin
    m = store.learn_success(AGENT, FIX, error=plain)
    store.apply(m.id, helpful=False, agent_id=AGENT, error=plain)
    assert store.error_signature(plain).origin is None
    assert offered(store.on_task_error({"id": "T-1", "title": "x", "agent_id": AGENT}, plain)) == []


@hsettings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(credits=st.lists(st.tuples(st.sampled_from(["FooTest", "BarTest"]), st.booleans()), max_size=6))
def test_offered_by_the_credits_of_its_own_origin_there_and_by_all_credits_elsewhere(tmp_path_factory, credits):
    with MemoryStore(tmp_path_factory.mktemp("local") / "m.db") as s:
        m = s.learn_success(AGENT, FIX, error=trace("FooTest"))
        for k, (test, helpful) in enumerate(credits):
            s.apply(m.id, helpful=helpful, agent_id=AGENT, error=trace(test, 40 + k))
        net_here = sum(1 if h else -1 for t, h in credits if t == "FooTest")
        net_all = sum(1 if h else -1 for _t, h in credits)
        # taught once (+1); offered while the net evidence is at least 0.5
        assert (offered(ask(s, "FooTest", "T-a")) == [FIX]) == (1 + net_here >= 0.5), credits
        assert (offered(ask(s, "BarTest", "T-b")) == [FIX]) == (1 + net_all >= 0.5), credits


def test_export_and_import_keep_where_each_credit_was_given(store, tmp_path):
    """The access log travels with the credits' error, origin and task: the copy answers as the original."""
    store.learn_success(AGENT, FIX, error=trace("FooTest"))
    shown = ask(store, "BarTest", "T-1")
    store.apply(shown.fixes[0].id, helpful=False, agent_id=AGENT, task_id="T-1")
    out = tmp_path / "export.jsonl"
    store.export_jsonl(out)
    with MemoryStore(tmp_path / "copy.db") as other:
        other.import_jsonl(out)
        other.import_jsonl(out)  # twice: nothing added
        assert offered(ask(other, "FooTest", "T-2")) == [FIX]
        assert offered(ask(other, "BarTest", "T-3")) == []
        rows = other._core.backend.execute(
            "SELECT error_origin, task_signature FROM memory_access_log WHERE access_type = 'applied'"
        ).fetchall()
        assert [tuple(r) for r in rows] == [("org.example.BarTest", store.task_signature("run BarTest"))]


def test_credits_from_elsewhere_are_left_out_of_every_variant_of_a_local_kind(store):
    """(review) Two variants of one kind, taught in two origins: the other origin's credits on its own variant do not
    refute the kind in this one."""
    store.learn_success(AGENT, "git apply fixes/a/parser.patch", error=trace("FooTest"))
    b = store.learn_success(AGENT, "git apply fixes/b/parser.patch", error=trace("BarTest"))
    for k in range(3):
        store.apply(b.id, helpful=False, agent_id=AGENT, error=trace("BarTest", 50 + k))
    here = ask(store, "FooTest", "T-1")  # the kind is offered (a variant of it stands for it)
    assert len(here.fixes) == 1 and here.fixes[0].content.startswith("git apply fixes/")
    assert here.fix_evidence[0].unhelpful == 0
    assert offered(ask(store, "BarTest", "T-2")) == []


def test_a_format_3_export_imported_again_adds_no_access_rows(store, tmp_path):
    """(review) An export written before access records carried their task and origin (format 3) matches the store's
    rows on the fields it has: importing it again adds nothing, and the header of a new export says format 5."""
    import json

    store.learn_success(AGENT, FIX, error=trace("FooTest"))
    shown = ask(store, "BarTest", "T-1")
    store.apply(shown.fixes[0].id, helpful=False, agent_id=AGENT, task_id="T-1")
    out = tmp_path / "export.jsonl"
    store.export_jsonl(out)
    assert json.loads(out.read_text().splitlines()[0])["version"] == 5
    legacy = tmp_path / "v3.jsonl"
    older_export(
        out,
        legacy,
        3,
        access=("task_signature", "error_origin", "error_line", "error_instance"),
        links=("task_signature", "error_origin", "error_instance"),
    )
    count = "SELECT COUNT(*) FROM memory_access_log"
    before = store._core.backend.execute(count).fetchone()[0]
    store.import_jsonl(legacy)
    assert store._core.backend.execute(count).fetchone()[0] == before
    assert offered(ask(store, "FooTest", "T-2")) == [FIX]  # the credit still counts where it was given only
