"""A failure inside the tests only names its test method, and the same test method failing with the
same message in another test class (a subclass, a copied suite) joins the first group that signed it
(signing method 10, docs/signatures.md "Joined groups"). The traces are small and written for the test
in the shape JUnit, the JVM and pytest print them."""

from __future__ import annotations

import contextlib
import itertools

from hypothesis import HealthCheck, given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import TemplateMiner
from harness_memory.failure_excerpt import extract


def _junit(test_class: str, method: str, message: str = "expected:<3> but was:<8>", line: int = 40) -> str:
    return (
        f"junit.framework.AssertionFailedError: {message}\n"
        "\tat junit.framework.Assert.fail(Assert.java:57)\n"
        "\tat junit.framework.Assert.failNotEquals(Assert.java:329)\n"
        "\tat junit.framework.TestCase.assertEquals(TestCase.java:244)\n"
        f"\tat org.acme.codec.{test_class}.{method}({test_class}.java:{line})\n"
        "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
        "\tat java.lang.reflect.Method.invoke(Method.java:498)\n"
        "\tat junit.framework.TestCase.runTest(TestCase.java:176)\n"
    )


def _pytest_tb(test_file: str, function: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/builds/acme/tests/{test_file}", line 12, in {function}\n'
        "    assert decode(data) == expected\n"
        "AssertionError: assert b'ello' == b'hello'\n"
    )


def test_one_test_method_failing_alike_in_two_test_classes_is_one_signature(store):
    first = store.error_signature(_junit("Base32InputStreamTest", "testSkipToEnd", "expected:<-1> but was:<183>"))
    second = store.error_signature(_junit("Base64InputStreamTest", "testSkipToEnd", "expected:<-1> but was:<255>"))
    assert first.frame == "org.acme.codec.Base32InputStreamTest"
    assert second.frame == "org.acme.codec.Base64InputStreamTest"  # where it failed is still reported
    assert second.id == first.id
    miner = store._core.miner
    # the second class's own template is kept and linked to the first group, so its later failures follow
    assert set(miner.aliases(first.id)) > {first.id}
    later = store.error_signature(_junit("Base64InputStreamTest", "testAvailable", "expected:<1> but was:<8>"))
    assert later.id == first.id
    assert store.has_seen_error("ci", _junit("Base64InputStreamTest", "testSkipBig")) is False  # nothing stored


def test_a_different_test_method_or_a_different_message_is_not_joined(store):
    a = store.error_signature(_junit("ParserTest", "testOne"))
    assert store.error_signature(_junit("LexerTest", "testTwo")).id != a.id  # another test
    assert store.error_signature(_junit("ScannerTest", "testOne", "Maximum restriction not verified")).id != a.id
    # and a failure in the code under test keys on that code's frame: its test method joins nothing
    in_code = (
        "java.lang.NullPointerException\n"
        "\tat org.acme.codec.Decoder.decode(Decoder.java:88)\n"
        "\tat org.acme.codec.WriterTest.testOne(WriterTest.java:12)\n"
    )
    assert extract(in_code).joins == []
    assert store.error_signature(in_code).id != a.id


def test_a_group_joined_later_brings_its_earlier_failures_and_keys_along(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        b_other = store.error_signature(_junit("BTest", "testOther"))  # group B, key testOther
        a = store.error_signature(_junit("ATest", "testShared"))  # group A, key testShared
        assert a.id != b_other.id
        joined = store.error_signature(_junit("BTest", "testShared"))  # B's template meets A's key
        assert joined.id == a.id
        assert store.error_signature(_junit("BTest", "testOther")).id == a.id
        # testOther's key now names A too (re-pointed, never chained): a third class signing it lands in A
        assert store.error_signature(_junit("CTest", "testOther")).id == a.id
        miner = store._core.miner
        assert miner.canonical(b_other.id) == a.id
        assert all(miner.canonical(x) == a.id for x in miner.aliases(a.id))
        # the aliases are the signatures rows may carry (A's, B's and C's templates), never the join keys
        assert len(miner.aliases(a.id)) == 3 and b_other.id in miner.aliases(a.id)
        assert not any(x.startswith("errjoin_") for x in miner.aliases(a.id))
    with MemoryStore(tmp_path / "m.db") as again:  # the joins are stored, not held by one process
        assert again.error_signature(_junit("BTest", "testOther")).id == a.id


def test_a_test_frame_without_a_class_names_no_test_method():
    trace = (
        "java.lang.AssertionError: boom\n"
        "\tat HelperTest(HelperTest.java:3)\n"
        "\tat MidTest(MidTest.java:9)\n"
        "\tat OuterTest(OuterTest.java:12)\n"
    )
    ex = extract(trace)
    assert ex.frame == "OuterTest"  # the outermost frame, whole
    assert ex.joins == []


def test_a_python_test_function_failing_in_two_test_files_is_one_signature(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        x = store.error_signature(_pytest_tb("test_base32.py", "test_decode"))
        y = store.error_signature(_pytest_tb("test_base64.py", "test_decode"))
        z = store.error_signature(_pytest_tb("test_base64.py", "test_encode_roundtrip"))
    assert x.frame == "test_base32.py" and y.frame == "test_base64.py"
    assert x.id == y.id == z.id  # test_encode_roundtrip fails in test_base64.py's group, now joined
    assert extract(_pytest_tb("test_x.py", "test_decode")).joins == ["test method test_decode"]
    # a test file run as a script fails at its module level: no test function, nothing to join
    assert extract(_pytest_tb("test_x.py", "<module>")).joins == []


def test_resign_keeps_a_joined_template_signing_into_its_group(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        b = store.remember("base64 skip fails", type="failure", agent_id="ci", error=_junit("BTest", "testSkip"))
        a = store.error_signature(_junit("ATest", "testOther"))
        store.error_signature(_junit("ATest", "testSkip"))  # A's template meets B's key: A joins B
        assert store.error_signature(_junit("ATest", "testOther")).id == b.error_signature
        out = store.run_job("resign", force=True).counts
        assert out["changed"] == 0  # nothing stored under A's own id
        # a row still holding the joined template's id moves to the group
        store._core.backend.execute("UPDATE memories SET error_signature = ? WHERE id = ?", (a.id, b.id))
        out = store.run_job("resign", force=True).counts
        assert out["changed"] == 1
        assert store.get(b.id).error_signature == b.error_signature
        # and A's template was kept: its failures still sign into the group
        assert store.error_signature(_junit("ATest", "testThird")).id == b.error_signature


def test_a_joined_template_that_generalises_still_signs_into_its_group(tmp_path, monkeypatch):
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)  # generalise on the first difference (method 24 waits for 4)
    with MemoryStore(tmp_path / "m.db") as store:
        b = store.error_signature(_junit("BTest", "testPattern", "option g not FileInputStream"))
        a = store.error_signature(_junit("ATest", "testPattern", "option g not FileInputStream"))
        assert a.id == b.id  # ATest's template joined BTest's group
        # ATest's template generalises (a write that empties the miner's cache): the id is still the group's
        c = store.error_signature(_junit("ATest", "testPattern", "option f not FileInputStream"))
        assert c.template.endswith("option <*> not FileInputStream")
        assert c.id == b.id


def test_a_row_signed_before_its_template_was_joined_moves_to_the_group_on_resign(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        store.error_signature(_junit("BTest", "testSkip"))  # group B holds the key of testSkip
        early = store.remember("a fails", type="failure", agent_id="ci", error=_junit("ATest", "testOther"))
        group_b = store.error_signature(_junit("BTest", "testSkip")).id
        assert early.error_signature != group_b
        assert store.error_signature(_junit("ATest", "testSkip")).id == group_b  # A joins B
        # the row's basis (ATest's message, its class as frame, no test method) signs into B now
        assert store.run_job("resign", force=True).counts["changed"] == 1
        assert store.get(early.id).error_signature == group_b
        assert store.error_signature(_junit("ATest", "testThird")).id == group_b


def test_a_failure_named_by_two_join_keys_joins_both_groups(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        miner = store._core.miner
        tokens = ["AssertionError:", "<*>"]
        exc = "AssertionError"
        first, _ = miner.sign(tokens, "tests.TestOne", "assertion", exc, ["test method a"])
        second, _ = miner.sign(tokens, "tests.TestTwo", "assertion", exc, ["test method b"])
        assert first != second
        both, _ = miner.sign(tokens, "tests.TestThree", "assertion", exc, ["test method a", "test method b"])
        assert both in (first, second)
        assert miner.canonical(first) == miner.canonical(second) == both
        assert miner.sign(tokens, "tests.TestOne", "assertion", exc)[0] == both
        assert miner.sign(tokens, "tests.TestTwo", "assertion", exc)[0] == both


def test_a_joined_template_that_generalises_without_a_join_key_still_signs_into_its_group(tmp_path, monkeypatch):
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)  # generalise on the first difference (method 24 waits for 4)
    """(a message without a test method: a row re-signed from its basis, a Python test file's module level)"""
    with MemoryStore(tmp_path / "m.db") as store:
        miner = store._core.miner
        exc = "AssertionError"
        group, _ = miner.sign(["AssertionError:", "option", "g", "unset"], "tests.TestB", "assertion", exc, ["k"])
        joined, _ = miner.sign(["AssertionError:", "option", "g", "unset"], "tests.TestA", "assertion", exc, ["k"])
        assert joined == group
        sig, tpl = miner.sign(["AssertionError:", "option", "f", "unset"], "tests.TestA", "assertion", exc)
        assert tpl == ["AssertionError:", "option", "<*>", "unset"]  # TestA's template generalised (a write)
        assert sig == group


def _before_next_write(store: MemoryStore, other_writer):
    """Make ``store``'s next write transaction start only after ``other_writer()`` has committed
    (another process's write landing between this store's reads and its write)."""
    backend = store._core.backend
    real = backend.write

    @contextlib.contextmanager
    def write():
        backend.write = real
        other_writer()
        with real() as c:
            yield c

    backend.write = write


def test_a_key_another_process_stored_meanwhile_is_read_again_under_the_write_lock(tmp_path):
    path = tmp_path / "m.db"
    with MemoryStore(path) as one, MemoryStore(path) as two:
        c = one.error_signature(_junit("CTest", "testOther"))  # C's template exists: the next sign only joins
        _before_next_write(one, lambda: two.error_signature(_junit("DTest", "testNew")))
        joined = one.error_signature(_junit("CTest", "testNew"))  # the key was absent when read, D's by the write
        d = two.error_signature(_junit("DTest", "testNew"))
        assert joined.id == d.id != c.id
        assert one.error_signature(_junit("CTest", "testOther")).id == d.id


def test_a_group_joined_by_another_process_is_read_again_under_the_write_lock(tmp_path):
    path = tmp_path / "m.db"
    with MemoryStore(path) as one, MemoryStore(path) as two:
        one._core.miner.REFRESH_SECONDS = 3600.0  # this process's cached templates stay as they were read
        one.error_signature(_junit("CTest", "testOther"))  # (writes: C's template and its key)
        one.error_signature(_junit("CTest", "testOther", "expected:<4> but was:<9>"))  # reads C's partition
        e = two.error_signature(_junit("ETest", "testShared"))
        assert two.error_signature(_junit("CTest", "testShared")).id == e.id  # C joined E, in the other process
        fresh = one.error_signature(_junit("CTest", "testNew"))  # a new key, signed from a stale cache
        assert fresh.id == e.id
        assert two._core.miner.canonical(fresh.id) == fresh.id  # the new key names E, not the retired C


_CLASSES = ["ATest", "BTest", "CTest", "DTest"]
_METHODS = ["testOne", "testTwo", "testThree"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pairs=st.lists(st.sampled_from(list(itertools.product(_CLASSES, _METHODS))), min_size=1, max_size=8, unique=True),
    data=st.data(),
)
def test_the_groups_are_the_connected_classes_whatever_the_order(tmp_path_factory, pairs, data):
    """Two failures share a signature exactly when their test classes are connected through test
    methods failing in both, in any signing order; every id resolves to its group in one step."""
    order = data.draw(st.permutations(pairs))
    parent = {c: c for c, _ in pairs}

    def root(c):
        while parent[c] != c:
            c = parent[c]
        return c

    by_method: dict[str, str] = {}
    for c, m in pairs:
        if m in by_method:
            parent[root(c)] = root(by_method[m])
        by_method.setdefault(m, c)
    with MemoryStore(tmp_path_factory.mktemp("j") / "m.db") as store:
        for c, m in order:
            store.error_signature(_junit(c, m))
        ids = {(c, m): store.error_signature(_junit(c, m)).id for c, m in pairs}
        miner = store._core.miner
        for (c1, m1), (c2, m2) in itertools.combinations(pairs, 2):
            assert (ids[c1, m1] == ids[c2, m2]) == (root(c1) == root(c2))
        for sig in set(ids.values()):
            assert miner.canonical(sig) == sig
            assert all(miner.canonical(x) == sig for x in miner.aliases(sig))
