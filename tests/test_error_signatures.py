from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import worker_processes
from harness_memory import MemoryStore
from harness_memory.error_signatures import CATEGORIES, TemplateMiner, categorize, extract, mask_params, tokenize

PY_TB = """Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/requests/api.py", line 59, in request
    return session.request(method=method, url=url, **kwargs)
  File "/srv/app/billing/client.py", line 41, in fetch_invoice
    resp = requests.get(url, timeout=5)
  File "/usr/lib/python3.11/site-packages/requests/adapters.py", line 519, in send
    raise ConnectionError(e, request=request)
requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.com', port=443): Max retries exceeded
"""

JAVA = """java.lang.IllegalStateException: outer failure
\tat org.example.Service.run(Service.java:10)
Caused by: java.lang.NullPointerException: name is null
\tat org.example.parser.Parser.parse(Parser.java:120)
\tat org.example.parser.ParserTest.testParse(ParserTest.java:33)
\tat junit.framework.TestCase.runTest(TestCase.java:176)
"""

CI_LOG = """
> build
> tsc -p .
Compiling 312 files...
src/api/routes.ts(41,7): error TS2322: Type 'number' is not assignable to type 'string'.
Found 1 error.
"""


def test_excerpts_from_tracebacks_java_and_logs():
    py = extract(PY_TB)
    assert py.exception == "ConnectionError" and py.frame == "client.py:fetch_invoice"
    assert py.message.startswith("requests.exceptions.ConnectionError:")
    java = extract(JAVA)  # the root cause, keyed on the first non-test application frame
    assert java.exception == "NullPointerException" and java.frame == "org.example.parser.Parser.parse"
    ci = extract(CI_LOG)
    assert "error TS2322" in ci.message
    assert extract("npm ERR! code ERESOLVE\nnpm ERR! unable to resolve dependency tree").message.startswith("npm ERR!")


@pytest.mark.parametrize(
    "text,category",
    [
        ("ModuleNotFoundError: No module named 'foo'", "import_error"),
        ("TypeError: unsupported operand type(s) for +: 'int' and 'str'", "type_error"),
        ("error[E0308]: mismatched types", "compile_error"),  # a compiler's type check: the build did not compile
        ("src/Foo.java:17: error: incompatible types: String cannot be converted to int", "compile_error"),
        ("app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.", "type_error"),
        ("app.py:3: error: Incompatible types in assignment", "type_error"),
        ("SyntaxError: invalid syntax", "compile_error"),
        ("AssertionError: expected 3, got 2", "assertion"),
        ("FAILED tests/test_api.py::test_list - KeyError", "test_failure"),
        ("1 test failed, 20 passed", "test_failure"),
        ("TimeoutError: operation timed out after 30s", "timeout"),
        ("curl: (7) Failed to connect: Connection refused", "network"),
        ("HTTP 429 Too Many Requests: rate limit reached", "rate_limit"),
        ("java.lang.OutOfMemoryError: Java heap space", "out_of_memory"),
        ("This model's maximum context length is 8192 tokens", "context_overflow"),
        ("PermissionError: [Errno 13] Permission denied: '/etc/shadow'", "permission"),
        ("cat: /tmp/x: No such file or directory", "not_found"),
        ("something odd happened", "unknown"),
    ],
)
def test_categories(text, category):
    assert categorize(extract(text)) == category
    assert category in CATEGORIES


def test_signature_fields_and_masked_params(store):
    sig = store.error_signature(
        "ConnectionRefusedError: connect to 10.0.0.7:5432 refused after 3 retries "
        "(config /etc/app/db.yaml, request 3fa85f64-5717-4562-b3fc-2c963f66afa6)"
    )
    assert sig.id.startswith("err_") and sig.category == "network"
    assert "10.0.0.7:5432" in sig.params and "/etc/app/db.yaml" in sig.params
    assert "3fa85f64-5717-4562-b3fc-2c963f66afa6" in sig.params
    for value in sig.params:
        assert value not in sig.template


ident = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ip=st.ip_addresses(v=4),
    port=st.integers(1, 65535),
    n=st.integers(0, 10**9),
    path=st.lists(ident, min_size=2, max_size=5),
    hexid=st.binary(min_size=8, max_size=16),
    name=ident,
)
def test_variable_values_never_split_a_group(store, ip, port, n, path, hexid, name):
    base = store.error_signature(
        "ConnectionError: could not reach 10.1.2.3:80 after 5 tries reading /a/b (trace 0xdeadbeef, key 'x')"
    )
    other = store.error_signature(
        f"ConnectionError: could not reach {ip}:{port} after {n} tries reading "
        f"/{'/'.join(path)} (trace 0x{hexid.hex()}, key '{name}')"
    )
    assert other.id == base.id


@given(st.text(max_size=300))
def test_masking_is_idempotent(text):
    once, _ = mask_params(text)
    assert mask_params(once)[0] == once
    assert tokenize(" ".join(tokenize(once))) == tokenize(once)


@hsettings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=2000))
def test_fuzz_signing_never_fails(store, text):
    if not text.strip() or "\x00" in text:
        return
    sig = store.error_signature(text)
    assert sig.id.startswith("err_") and sig.category in CATEGORIES


def test_id_survives_generalisation_and_restarts(db_path):
    with MemoryStore(db_path) as s:
        a = s.error_signature("worker alpha lost its lease on queue payments")
        b = s.error_signature("worker beta lost its lease on queue payments")  # one other word: no evidence yet
        c = s.error_signature("worker gamma lost its lease on queue payments")
        assert len({a.id, b.id, c.id}) == 3 and b.template == "worker beta lost its lease on queue payments"
        d = s.error_signature("worker delta lost its lease on queue payments")  # a fourth word: a variable
        assert d.id == a.id and d.template == "worker <*> lost its lease on queue payments"
        miner = s._core.miner
        assert {miner.canonical(x.id) for x in (a, b, c)} == {a.id}  # the templates it covers are its group
    with MemoryStore(db_path) as s:
        assert s.error_signature("worker epsilon lost its lease on queue payments").id == a.id
        assert s.error_signature("worker beta lost its lease on queue payments").id == a.id


def _sign_in_child(path, q):
    with MemoryStore(path) as s:
        q.put(s.error_signature("worker alpha lost its lease on queue payments").id)


def test_signature_is_shared_across_processes(db_path):
    with MemoryStore(db_path) as s:
        first = s.error_signature("worker alpha lost its lease on queue payments").id
    ctx = worker_processes()
    q = ctx.Queue()
    p = ctx.Process(target=_sign_in_child, args=(str(db_path), q))
    p.start()
    assert q.get(timeout=240) == first  # a bound on a spawned child under load, not a timing
    p.join(timeout=30)


def test_subsumed_templates_are_linked_not_renamed(store, monkeypatch):
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)  # generalise on the first difference (method 25 waits for 4)
    t1 = store.error_signature("deploy blocked by lock alpha beta gamma delta on main")
    t2 = store.error_signature("deploy blocked by lock red green blue black on main")  # 6/10 alike: a new group
    assert t2.id != t1.id
    mem = store.remember(
        "stale deploy locks: clear them with lockctl",
        type="success",
        agent_id="a",
        error="deploy blocked by lock red green blue black on main",
    )
    assert mem.error_signature == t2.id
    store.error_signature("deploy blocked by lock kappa lambda mu delta on main")  # t1 generalises
    g = store.error_signature("deploy blocked by lock kappa lambda mu sigma on main")  # t1 now subsumes t2
    assert g.id == t1.id and g.template == "deploy blocked by lock <*> <*> <*> <*> on main"
    miner = store._core.miner
    assert miner.canonical(t2.id) == t1.id and set(miner.aliases(t1.id)) == {t1.id, t2.id}
    # an error of t2's kind now signs as t1, and still finds the memory stored under t2
    again = store.error_signature("deploy blocked by lock red green blue black on main")
    assert again.id == t1.id
    hits = store.recall("", agent_id="a", error="deploy blocked by lock red green blue black on main")
    assert [h.memory.id for h in hits] == [mem.id]
    assert store.has_seen_error("a", "deploy blocked by lock one two three four on main") is True


def test_environment_errors_are_one_error_wherever_the_code_met_them(store):
    def tb(script, func):
        return (
            f'Traceback (most recent call last):\n  File "/srv/{script}", line 3, in {func}\n    import yaml\n'
            "ModuleNotFoundError: No module named 'yaml'\n"
        )

    a, b = store.error_signature(tb("load_config.py", "<module>")), store.error_signature(tb("deploy.py", "main"))
    assert a.id == b.id and a.frame != b.frame  # the frame is reported, not keyed on
    k1 = store.error_signature(
        "Traceback (most recent call last):\n  File \"/srv/a.py\", line 3, in f\n    d[k]\nKeyError: 'region'\n"
    )
    k2 = store.error_signature(
        "Traceback (most recent call last):\n  File \"/srv/b.py\", line 9, in g\n    d[k]\nKeyError: 'region'\n"
    )
    assert k1.id != k2.id  # a code error keys on where it happened


def test_relative_file_paths_are_variables(store):
    assert store.error_signature("would reformat src/calc.py").id == store.error_signature("would reformat pkg/x.py").id
    assert "TCP/IP" in store.error_signature("TCP/IP stack failed to start").template


@given(
    st.text(max_size=200)
    | st.sampled_from(
        [
            "Permission denied (publickey)",
            "HTTP 429 Too Many Requests",
            "No rule to make target 'x'",
            "invalid-syntax: Expected `)`",
            "maximum context length is 8192 tokens",
            "Cannot allocate memory",
            "error TS2322: Type 'number' is not assignable",
            "request timed out",
            "ECONNRESET by peer",
        ]
    )
)
def test_the_category_shortcut_never_changes_the_category(text):
    from harness_memory import error_signatures as es

    naive = next((cat for cat, rx in es._BY_TEXT if rx.search(text)), None)
    # (``_by_words`` is the shortcut; ``_by_text`` also reads the failure lexicon where the words say nothing)
    assert es._by_words(text) == naive
