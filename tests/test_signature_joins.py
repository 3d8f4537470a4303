"""A failure inside the tests only names its test method, and the same test method failing with the
same message in another test class (a subclass, a copied suite) joins the first group that signed it
(signing method 10, docs/signatures.md "Joined groups"). The traces are small and written for the test
in the shape JUnit, the JVM and pytest print them."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings, strategies as st

from harness_memory import MemoryStore
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


def test_a_python_test_function_failing_in_two_test_files_is_one_signature(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        x = store.error_signature(_pytest_tb("test_base32.py", "test_decode"))
        y = store.error_signature(_pytest_tb("test_base64.py", "test_decode"))
        z = store.error_signature(_pytest_tb("test_base64.py", "test_encode_roundtrip"))
    assert x.frame == "test_base32.py" and y.frame == "test_base64.py"
    assert x.id == y.id == z.id  # test_encode_roundtrip fails in test_base64.py's group, now joined
    assert extract(_pytest_tb("test_x.py", "test_decode")).joins == ["test method test_decode"]


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
