"""Signing as documented (harness_memory/error_signatures.py, docs/signatures.md): every kind of
variable part is masked and returned as a parameter in order; host names are told apart from
qualified code names; a token with a digit is a variable unless it names an exception; each category
is reached from an exception type, from the words of the message, from the kind of diagnostic or
from an exit code; the miner joins a message to a template at the similarity threshold and not
below it, across one variable token of length difference, and keeps ids stable."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import TemplateMiner, categorize, extract, mask_params, tokenize

MASKED = [
    ("id 550e8400-e29b-41d4-a716-446655440000 gone", "id <*> gone", ["550e8400-e29b-41d4-a716-446655440000"]),
    ("see https://x.io/a?b=1 now", "see <*> now", ["https://x.io/a?b=1"]),
    ("mail bob@corp.example.com bounced", "mail <*> bounced", ["bob@corp.example.com"]),
    ("at 2026-01-02T03:04:05Z it", "at <*> it", ["2026-01-02T03:04:05Z"]),
    ("at 2026-01-02 03:04:05.123+02:00 it", "at <*> it", ["2026-01-02 03:04:05.123+02:00"]),
    ("db.internal.corp:5432 refused", "<*> refused", ["db.internal.corp:5432"]),
    ("connect to api.example.com failed", "connect to <*> failed", ["api.example.com"]),
    ("node7.cluster.lan is down", "<*> is down", ["node7.cluster.lan"]),
    ("ip 10.0.0.1:8080 refused", "ip <*> refused", ["10.0.0.1:8080"]),
    # a dotted name before a line number whose last part holds a digit is code (a method), not a host
    ("at Foo.Bar2:12 x", "at Foo.Bar2:<*> x", ["12"]),
    ("ip 192.168.1.20 refused", "ip <*> refused", ["192.168.1.20"]),
    ("addr 0xdeadbeef freed", "addr <*> freed", ["0xdeadbeef"]),
    ("sha 0123456789abcdef0123 missing", "sha <*> missing", ["0123456789abcdef0123"]),
    ("file /usr/lib/python3/x.py:12:4 bad", "file <*> bad", ["/usr/lib/python3/x.py:12:4"]),
    ("file C:\\Users\\bob\\app.py:7 bad", "file <*> bad", ["C:\\Users\\bob\\app.py:7"]),
    ("open app/main.py:3 bad", "open <*> bad", ["app/main.py:3"]),
    ("dir /tmp/tmpab12cd_x bad", "dir <*> bad", ["/tmp/tmpab12cd_x"]),
    ("in tmpk3j4h5l6 bad", "in <*> bad", ["tmpk3j4h5l6"]),
    ('key "abc" missing', 'key "<*>" missing', ["abc"]),  # (method 25: the quotes stay, the value is the param)
    ("key 'abc' and `cmd` missing", "key '<*>' and `<*>` missing", ["abc", "cmd"]),
    (
        "took 350ms and 12 MB and 5% and 3 seconds",
        "took <*> and <*> and <*> and <*>",
        ["350ms", "12 MB", "5%", "3 seconds"],
    ),
    ("count 42 and -3.5e2", "count <*> and <*>", ["42", "-3.5e2"]),
    ("expected 3 but got 4", "expected <*> but got <*>", ["3", "4"]),
    ("Expected: <[a, b]> but was: <[a]>", "Expected: <*> but was: <*>", ["<[a, b]>", "<[a]>"]),
    ("failed (12, 13) now", "failed now", ["12", "13"]),
    ("failed () now", "failed now", []),
    # a parenthesised part of signed numbers or a range is optional too (method 10): a negative long's digits
    # are masked as a hash before the number mask, and the sign alone must not keep the part
    ("value (-9223372036854775809) out of range", "value out of range", ["9223372036854775809"]),
    ("out of range of long (-128 - 127)", "out of range of long", ["-128", "127"]),
    ("offset (+2) applied", "offset applied", ["+2"]),
    ("call f(x) - g(-y)", "call f(x) - g(-y)", []),
]


@pytest.mark.parametrize("text,masked,params", MASKED, ids=[m[0][:24] for m in MASKED])
def test_each_kind_of_variable_is_masked_and_kept_as_a_parameter(text, masked, params):
    assert mask_params(text) == (masked, params)
    assert mask_params(masked)[0] == masked  # idempotent


@pytest.mark.parametrize(
    "text",
    [
        "java.lang.String cannot be cast",
        "os.path.join failed",
        "Foo.bar:12 x",  # (its first word is what is checked)
        "main.py:12 error",
        "a.b.C.method broke",
    ],
)
def test_qualified_code_names_are_not_hosts(text):
    masked, _ = mask_params(text)
    first = text.split()[0].split(":")[0]
    assert first in masked


def test_a_token_with_a_digit_is_a_variable_unless_it_names_an_exception():
    assert tokenize("sqlite3.OperationalError: x9 uid=<*> Http2Exception abc1 plain") == [
        "sqlite3.OperationalError:",
        "<*>",
        "uid=<*>",
        "Http2Exception",
        "<*>",
        "plain",
    ]
    assert tokenize("  spaced   out  ") == ["spaced", "out"]
    assert tokenize("") == []


CATEGORIES = [
    ("java.lang.ClassNotFoundException: org.x.Y", "import_error"),
    ("java.lang.ClassCastException: A cannot be cast to B", "type_error"),
    ("IndentationError: unexpected indent", "compile_error"),
    ("org.opentest4j.AssertionFailedError: expected: <1> but was: <2>", "assertion"),
    ("java.net.SocketTimeoutException: Read timed out", "timeout"),
    (
        'Traceback (most recent call last):\n  File "/srv/app/load.py", line 3, in <module>\n    x = [0] * 10**12\n'
        "MemoryError\n",
        "out_of_memory",
    ),
    ("java.nio.file.AccessDeniedException: /x", "permission"),
    ("KeyError: 'k'", "not_found"),
    ("ssl.SSLError: bad handshake", "network"),
    ("java.net.UnknownHostException: foo", "network"),
    ("error: prompt is too long", "context_overflow"),
    ("ERROR: quota exceeded for project", "rate_limit"),
    ("Too Many Requests", "rate_limit"),
    ("fork: cannot allocate memory", "out_of_memory"),
    ("Killed: OOM", "out_of_memory"),
    ("rpc error: deadline exceeded", "timeout"),
    ("HTTP 403 Forbidden", "permission"),
    ("Error: Cannot find module 'left-pad'", "import_error"),
    ("AttributeError: 'NoneType' object has no attribute 'x'", "type_error"),
    ("undefined reference to `foo'", "compile_error"),
    ("the build failed in src/parser.c", "compile_error"),  # alone, "the build failed" is a runner's line: unknown
    ("Error: read ECONNRESET", "network"),
    ("Error: ENOENT: no such file", "not_found"),
    ("make: *** No rule to make target x", "not_found"),
    ("got 3, want 4", "assertion"),
    ("FAIL: test_login (tests.LoginTest)", "test_failure"),
    ("Error: Process completed with exit code 137.", "out_of_memory"),
    ("Error: Process completed with exit code 124.", "timeout"),
    ("Error: Process completed with exit code 127.", "not_found"),
    ("Error: Process completed with exit code 126.", "permission"),
    ("src/main.c:12:5: error: expected ; before }", "compile_error"),
    ("app/models.py:3: error: Incompatible return value", "type_error"),
    ("app/x.py:3: error: Name foo is not defined", "type_error"),
    ("lint.sh:3:1: warning: unused", "unknown"),
]


@pytest.mark.parametrize("text,category", CATEGORIES, ids=[c[0][:30] for c in CATEGORIES])
def test_each_category_is_reached(text, category):
    assert categorize(extract(text)) == category


# every literal the category filter looks for, each in a message that only it can categorise
WORDS = [
    ("context length exceeded for this model", "context_overflow"),
    ("too many tokens in the request", "context_overflow"),
    ("the prompt is too long", "context_overflow"),
    ("rate limit reached for requests", "rate_limit"),
    ("too many requests", "rate_limit"),
    ("HTTP 429 from the API", "rate_limit"),
    ("quota exceeded for the project", "rate_limit"),
    ("request was throttled", "rate_limit"),
    ("process ran out of memory", "out_of_memory"),
    ("killed by the OOM killer", "out_of_memory"),
    ("cannot allocate memory", "out_of_memory"),
    ("java heap space exhausted", "out_of_memory"),
    ("memory limit exceeded", "out_of_memory"),
    ("the request timed out", "timeout"),
    ("deadline exceeded while waiting", "timeout"),
    ("permission denied while opening", "permission"),
    ("access denied for user", "permission"),
    ("open failed: EACCES", "permission"),
    ("the server said forbidden", "permission"),
    ("HTTP 401 from the registry", "permission"),
    ("HTTP 403 from the registry", "permission"),
    ("the user is unauthorized", "permission"),
    ("operation not permitted", "permission"),
    ("no module named yaml", "import_error"),
    ("unresolved import crate::x", "import_error"),
    ("could not resolve dependency x", "import_error"),
    ("cannot import name Retry", "import_error"),
    ("package org.x.y does not exist", "import_error"),
    ("library stub not installed for yaml", "import_error"),
    ("no matching distribution found for foo", "import_error"),
    ("could not find a version that satisfies the requirement foo", "import_error"),
    ("unable to import foo", "import_error"),
    ("import error while loading", "import_error"),
    ("no required module provides package x", "import_error"),
    ("cannot find package x in any of", "import_error"),
    ("npm ERR! code E404", "import_error"),
    ("incompatible types in assignment", "type_error"),
    ("string is not assignable to number", "type_error"),
    ("error TS2322 in app.ts", "type_error"),
    ("object has no attribute foo", "type_error"),
    ("object is not callable", "type_error"),
    ("syntax error near unexpected", "compile_error"),
    ("compilation terminated", "compile_error"),
    ("error[E0425]: cannot find value x", "compile_error"),
    ("cannot find symbol Foo", "compile_error"),
    ("undefined reference to main", "compile_error"),
    ("unexpected token in JSON", "compile_error"),
    ("build failed with errors in lib/io.rs", "compile_error"),
    ("connection refused by peer", "network"),
    ("ECONNRESET while reading", "network"),
    ("network is unreachable", "network"),
    ("name or service not known", "network"),
    ("getaddrinfo failed for host", "network"),
    ("temporary failure in name resolution", "network"),
    ("broken pipe on write", "network"),
    ("ssl handshake failed", "network"),
    ("tls handshake failed", "network"),
    ("HTTP 502 from upstream", "network"),
    ("HTTP 503 from upstream", "network"),
    ("HTTP 504 from upstream", "network"),
    ("file not found", "not_found"),
    ("no such file or directory", "not_found"),
    ("open: ENOENT", "not_found"),
    ("the directory does not exist", "not_found"),
    ("HTTP 404 from the server", "not_found"),
    ("the config key is missing", "not_found"),
    ("no rule to make target all", "not_found"),
    ("assert x == y", "assertion"),
    ("expected 1 but got 2", "assertion"),
    ("got 1, want 2", "assertion"),
    ("3 tests failed", "test_failure"),
    # one word each, met by no other word of its category's list
    ("the worker ran short of heap space", "out_of_memory"),
    ("Package requirements (zstd >= 1.4) were not met", "import_error"),
    ("cannot call method 'save' on undefined", "type_error"),
    ("error: static assertion failed: size must be 8", "compile_error"),
    ("gcc: fatal error: no input file", "not_found"),
    ("Surefire: VM crash or System.exit called?", "test_failure"),
]


@pytest.mark.parametrize("text,category", WORDS, ids=[w[0][:30] for w in WORDS])
def test_every_word_of_a_category_reaches_it(text, category):
    assert categorize(extract(text)) == category
    assert categorize(extract(text.upper() if category != "import_error" else text)) == category


def test_a_category_word_counts_within_the_first_8000_characters_of_a_message():
    """The documented bound: a word that ends on the 8,000th character is read, one a character later is not."""
    assert categorize(extract("x" * 7996 + " 429")) == "rate_limit"
    assert categorize(extract("x" * 7997 + " 429")) != "rate_limit"


def test_a_line_that_says_why_is_categorised_by_its_words_not_the_exit_code_it_names():
    # the conventional meaning of an exit status (127: not found) decides only a runner's trailer, where it is
    # all there is; a line that names the status and its reason is categorised by the reason
    assert categorize(extract("error: the command exited with code 127: connection refused")) == "network"
    assert categorize(extract("Error: Process completed with exit code 127.")) == "not_found"


def test_a_pytest_block_that_only_says_a_test_failed_is_categorised_by_its_next_lines():
    log = (
        "____ test_fetch ____\n\n    def test_fetch():\n>       fetch()\n"
        "E       the test failed: the fetch did not finish\nE       connection refused by db.internal\n\n"
        "tests/test_fetch.py:4: Failed\n"
    )
    ex = extract(log)
    assert ex.kind == "pytest" and categorize(ex) == "network"


def test_compared_values_count_within_the_first_8000_characters_of_a_failure_s_detail():
    def failure(pad: int) -> str:  # a TAP failure whose indented detail ends in "assert" at character 8000 + pad
        return "not ok 1 - parses the feed\n" + ("  " + "x" * 999 + "\n") * 7 + "  " + "y" * (993 + pad) + " assert\n"

    assert categorize(extract(failure(0))) == "assertion"
    assert categorize(extract(failure(1))) != "assertion"


def test_a_missing_header_is_known_by_the_include_line_under_the_diagnostic():
    # a C++ standard-style header has no .h: only the echoed #include under the message says it is a header
    log = (
        "src/main.cpp:1:10: fatal error: boost/optional: No such file or directory\n"
        "    1 | #include <boost/optional>\n      |          ^~~~~~~~~~~~~~~~\ncompilation terminated.\n"
    )
    assert categorize(extract(log)) == "import_error"


def test_the_store_signs_with_category_params_and_a_stable_id(store):
    sig = store.error_signature("ConnectionRefusedError: connect to db.internal.corp:5432 failed after 3 retries")
    assert sig.category == "network"
    assert sig.template == "ConnectionRefusedError: connect to <*> failed after <*> retries"
    assert sig.params == ["db.internal.corp:5432", "3"]
    assert sig.id.startswith("err_") and len(sig.id) == 20
    assert (
        store.error_signature("ConnectionRefusedError: connect to cache.internal.corp:6379 failed after 9 retries").id
        == sig.id
    )


def test_messages_join_a_template_at_the_threshold_and_not_below(store, monkeypatch):
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)  # generalise on the first difference (method 25 waits for 4)
    a = store.error_signature("deploy step alpha failed on the main host")  # 8 tokens
    b = store.error_signature("deploy step beta failed on the main host")  # 7 of 8 alike: joins, generalises
    assert b.id == a.id and b.template == "deploy step <*> failed on the main host"
    c = store.error_signature("deploy step gamma broke in the main host")  # 6 of 8 (0.75): joins
    assert c.id == a.id
    d = store.error_signature("deploy phase delta broke in one spare box")  # 3 of 8: a new group
    assert d.id != a.id
    e = store.error_signature("rollout step alpha failed on the main host")  # another first token: another group
    assert e.id != a.id


def test_one_variable_token_more_or_less_joins_the_group(store):
    base = store.error_signature("cannot reach shard 12 of the cluster")
    assert base.template == "cannot reach shard <*> of the cluster"
    longer = store.error_signature("cannot reach shard 12 13 of the cluster")  # one variable more
    assert longer.id == base.id
    other = store.error_signature("cannot reach shard alpha beta of the cluster")  # words, not variables
    assert other.id != base.id
    two = store.error_signature("timeout waiting for replica 1 2 in zone")
    shorter = store.error_signature("timeout waiting for replica 3 in zone")  # one variable less
    assert shorter.id == two.id
    assert store.error_signature("timeout waiting for replica in zone").id != two.id  # two less: another group


def test_a_short_message_has_no_variable_length_neighbour(store):
    a = store.error_signature("failed x")
    b = store.error_signature("failed x y")
    assert a.id != b.id


def test_linked_signatures_form_one_group(store, monkeypatch):
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)  # generalise on the first difference (method 25 waits for 4)
    t1 = store.error_signature("queue drained by worker alpha beta gamma delta on node")
    t2 = store.error_signature("queue drained by worker red green blue black on node")
    assert t1.id != t2.id
    store.error_signature("queue drained by worker kappa lambda mu delta on node")
    store.error_signature("queue drained by worker kappa lambda mu sigma on node")  # t1 now subsumes t2
    miner = store._core.miner
    assert sorted(miner.group(t2.id)) == sorted([t1.id, t2.id]) == sorted(miner.group(t1.id))
    assert miner.group("err_unknown0000000") == ["err_unknown0000000"]
    assert miner.canonical(t1.id) == t1.id


def test_a_join_key_s_group_names_the_key_too(store):
    # a join key is linked to its group but hidden from aliases(); group() of any id still includes that id
    miner = store._core.miner
    sig, _ = miner.sign(["the", "join", "test", "failed"], "Suite.test_a", "test_failure", None, joins=["Suite.test_a"])
    keys = [
        r[0]
        for r in store._core.backend.execute("SELECT sig FROM error_signature_links WHERE canonical = ?", (sig,))
        if r[0] != sig
    ]
    assert len(keys) == 1 and keys[0] not in miner.aliases(sig)
    assert sorted(miner.group(keys[0])) == sorted([sig, keys[0]])


def test_a_group_that_joins_another_brings_the_signatures_it_had_absorbed(store, monkeypatch):
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)  # generalise on the first difference (method 25 waits for 4)
    # 16 tokens: six fixed words and two regions of five; differing in a whole region (5 of 16) is a new group
    fixed = "replica sync stalled for shard during".split()
    pool = iter(f"{c}{v}{e}" for c in "bcdfghjklmnp" for v in "aeiou" for e in "rstvz")

    def fresh(n):
        return [next(pool) for _ in range(n)]

    def sign(first, second):
        return store.error_signature(" ".join(fixed + first + second))

    a, aa, b, bb, c = (fresh(5) for _ in range(5))
    t2, t3, t1 = sign(b, bb), sign(c, bb), sign(a, aa)
    assert len({t1.id, t2.id, t3.id}) == 3
    mem = store.remember(
        "resync the shard from its snapshot", type="success", agent_id="a", error=" ".join(fixed + c + bb)
    )
    for k in range(1, 6):  # t2 generalises its first region and absorbs t3
        sign(fresh(k) + b[k:], bb)
    miner = store._core.miner
    assert miner.canonical(t3.id) == t2.id
    for k in range(1, 6):  # then t1 generalises both regions and absorbs t2
        sign(fresh(k) + a[k:], aa)
    for k in range(1, 6):
        last = sign(fresh(5), fresh(k) + aa[k:])
    assert last.id == t1.id and miner.canonical(t2.id) == t1.id
    # what t2 had absorbed is t1's now, not left pointing at a group that is gone
    assert miner.canonical(t3.id) == t1.id
    assert sorted(miner.group(t1.id)) == sorted([t1.id, t2.id, t3.id])
    hits = store.recall("", agent_id="a", error=" ".join(fixed + fresh(5) + fresh(5)))
    assert [h.memory.id for h in hits] == [mem.id]


def test_a_checkers_finding_that_is_neither_compiled_nor_typed_is_a_test_failure():
    assert categorize(extract("src/app.js:3:1: error  x is defined but never used")) == "test_failure"
    assert categorize(extract("src/app.rb:3:1: E: Layout/Indent")) == "test_failure"


@pytest.mark.parametrize(
    "other",
    [
        "cache miss blue 13 on shard",  # one variable less, but 'red' is not 'blue'
        "cache hit red 13 on shard",  # the same, the difference one token earlier
    ],
)
def test_the_gap_of_a_variable_length_group_must_come_before_the_first_difference(store, other):
    a = store.error_signature("cache miss red 11 12 on shard")  # cache miss red <*> <*> on shard
    assert store.error_signature("cache miss red 13 on shard").id == a.id  # one variable less joins
    assert store.error_signature(other).id != a.id


def test_a_two_token_message_has_no_variable_length_neighbour_and_a_three_token_one_has(store):
    two = store.error_signature("halt 1")
    assert store.error_signature("halt 2 3").id == two.id  # three tokens: joins 'halt <*>'
    three = store.error_signature("stop 1 2")
    assert store.error_signature("stop 3").id != three.id  # two tokens: never a neighbour


def test_a_relative_path_is_one_variable_whatever_its_first_folder():
    # the same error in two files of a repository is one template: the path is masked whole
    a, pa = mask_params("src/app/main.py:3: error: missing return statement")
    b, pb = mask_params("lib/util/io.py:41: error: missing return statement")
    assert a == b == "<*>: error: missing return statement"
    assert pa == ["src/app/main.py:3"] and pb == ["lib/util/io.py:41"]
    assert mask_params("cannot open /etc/app/config.yaml")[0] == mask_params("cannot open conf/app/config.yaml")[0]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("cannot open temp_a8Fk2Q/config.json", "cannot open temp_Zx9pLm/config.json"),
        ("cannot open /tmp/tmpa8fk2q/config.json", "cannot open /tmp/tmpzx9plm/config.json"),
        ("stale lock in pytest-of-alice/pytest-12", "stale lock in pytest-of-bob/pytest-7"),
    ],
)
def test_temporary_names_are_variables_whatever_their_prefix(a, b):
    assert mask_params(a)[0] == mask_params(b)[0]


def test_two_stores_on_one_file_sign_one_error_alike(tmp_path):
    # each store caches the templates it has read; creating one re-reads them first, so a template the
    # other store has just created is joined, never duplicated
    from harness_memory import MemoryStore

    with MemoryStore(tmp_path / "m.db") as a, MemoryStore(tmp_path / "m.db") as b:
        assert b.error_signature("unrelated warm-up error in module alpha").id  # b caches an empty partition
        first = a.error_signature("replica lag exceeded on node red blue green")
        second = b.error_signature("replica lag exceeded on node red blue green")
        assert second.id == first.id


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ERROR: Job failed: exit code 1", "unknown"),  # a runner's exit line says something failed, not what
        ("BUILD FAILED in 3s", "unknown"),
        ("Build step failed\nBuild step failed", "unknown"),
        ("ERROR: Job failed: exit code 124", "timeout"),  # only a conventional exit code speaks
        ("Job failed: exit code 1\nConnectionRefusedError: [Errno 111] Connection refused", "network"),
        ("FAILED\n  tests/test_a.py::test_x - AssertionError: 1 != 2", "assertion"),  # the line under it says why
        ("Tests failed", "test_failure"),
        # a trailer that says what failed and how it ended: the conventional exit code of ``timeout`` decides
        ("running suite\nTests failed with exit code 124", "timeout"),
        ("running suite\nTests failed with exit code 1", "test_failure"),
    ],
)
def test_a_runner_s_exit_lines_are_read_past_never_for_their_words(text, expected):
    assert categorize(extract(text)) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("panic: interface conversion: interface {} is nil, not string", "type_error"),
        ("Could not cast value of type 'Swift.String' to 'Swift.Int'", "type_error"),
        ("cannot convert a string into an integer", "type_error"),
        ("argument 2 must be bytes, not str", "type_error"),  # one type in place of another
        # one type name is no cast; and an operation that failed, its reason unsaid, is no test (method 33)
        ("error: failed to convert config.yaml to json", "unknown"),
        ("Error: cannot allocate vector of size 3.5 Gb", "out_of_memory"),
        ("Error: length(x) == 2 is not TRUE", "assertion"),
    ],
)
def test_the_words_of_heldout10_s_classes_reach_their_category(text, expected):
    assert categorize(extract(text)) == expected


_WHERE_WORDS = ["timeout", "ratelimit", "rate_limit", "oom", "permission", "network", "quota", "denied", "memory"]


@settings(max_examples=50, deadline=None)
@given(
    word=st.sampled_from(_WHERE_WORDS),
    stem=st.sampled_from(["test_{w}_parser", "{w}_test", "{w}", "check_{w}s", "{w}-handler"]),
    ext=st.sampled_from(["py", "go", "cc", "java", "rb", "js", "rs", "c"]),
    folder=st.sampled_from(["", "tests/", "src/net/", "pkg/{w}/", "/home/ci/build/"]),
    shape=st.sampled_from(
        [
            "FAILED {f}::test_parse - AssertionError: assert 3 == 4",
            "    {f}:21: got 3, want 4",
            "{f}:12: Failure\nValue of: parse(x)\n  Actual: 1\nExpected: 2",
            "{f}:12:3: error: expected ';' before 'return'",
        ]
    ),
)
def test_a_file_name_or_path_never_decides_the_category(word, stem, ext, folder, shape):
    # where a failure is (tests/test_timeout_parser.py, ratelimit_test.go) is not what it is
    named = (folder + stem + "." + ext).format(w=word)
    neutral = (folder.replace("{w}", "core") + "module_under_test." + ext).format(w=word)
    got = categorize(extract(shape.format(f=named)))
    assert got == categorize(extract(shape.format(f=neutral)))
    assert got not in ("timeout", "rate_limit", "out_of_memory", "permission", "network")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Can't locate Text/CSV_XS.pm in @INC (you may need to install the Text::CSV_XS module)", "import_error"),
        ("curl: (28) Operation timed out after 5000 milliseconds with 0 bytes received", "timeout"),
        ("PermissionError: [Errno 13] Permission denied: '/etc/app/timeout.conf'", "permission"),
        ("fatal: unable to access 'https://github.com/acme/tool.git/': Could not resolve host: github.com", "network"),
        ("java.net.SocketTimeoutException: Read timed out", "timeout"),
    ],
)
def test_a_path_s_place_in_a_statement_still_reads(text, expected):
    # the words around a path still decide, and a pattern that expects a name there still finds one
    assert categorize(extract(text)) == expected
