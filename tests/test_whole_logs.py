"""Error signatures of whole CI logs (issue 8): windows, cleaning, the decisive block, its line
span, invariance under CI decoration and noise, a passing baseline, and re-signing."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import SIGNATURE_METHOD
from harness_memory.failure_excerpt import WINDOW_CHARS, clean_lines

PYTEST = """============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0
rootdir: /builds/acme/shop
collected 14 items

tests/test_cart.py ......                                                [ 42%]
tests/test_prices.py ..F.....                                            [100%]

=================================== FAILURES ===================================
_______________________________ test_discount __________________________________

    def test_discount():
        cart = Cart([Item("book", 12.5)])
>       assert cart.total(discount=0.1) == 11.0
E       assert 11.25 == 11.0
E        +  where 11.25 = <bound method Cart.total of <shop.cart.Cart object at 0x7f3b2c1d5e10>>(discount=0.1)

tests/test_prices.py:21: AssertionError
=========================== short test summary info ============================
FAILED tests/test_prices.py::test_discount - assert 11.25 == 11.0
========================= 1 failed, 13 passed in 0.31s =========================
"""

GCC = """gcc -O2 -Wall -Werror -c src/util.c -o build/util.o
gcc -O2 -Wall -Werror -c src/main.c -o build/main.o
src/main.c: In function 'main':
src/main.c:14:5: error: unknown type name 'cfg_t'
   14 |     cfg_t *cfg = load_config(argv[1]);
      |     ^~~~~
make: *** [Makefile:12: build/main.o] Error 1
"""

TRACEBACK = """Running migrations...
Traceback (most recent call last):
  File "/srv/app/manage.py", line 22, in <module>
    main()
  File "/srv/app/billing/sync.py", line 41, in main
    client.fetch_invoices()
  File "/usr/lib/python3.11/site-packages/requests/adapters.py", line 519, in send
    raise ConnectionError(e, request=request)
requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.com', port=443): Max retries exceeded
"""

MAVEN = """[INFO] Scanning for projects...
[INFO] --- maven-compiler-plugin:3.11.0:compile (default-compile) @ shop ---
[INFO] Compiling 42 source files to /work/target/classes
[ERROR] COMPILATION ERROR :
[ERROR] /work/src/main/java/shop/Cart.java:[31,17] cannot find symbol
  symbol:   class Discount
  location: class shop.Cart
[INFO] 1 error
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile on project shop: Compilation failure
[ERROR] -> [Help 1]
"""

NPM = """> shop@1.0.0 build
> tsc -p .

npm error Missing script: "tset"
npm error
npm error Did you mean this?
npm error   npm test # Test a package
npm error A complete log of this run can be found in: /root/.npm/_logs/2025-03-04T10_11_12_123Z-debug-0.log
"""

LOGS = {
    "pytest": (PYTEST, "assertion", 16),
    "gcc": (GCC, "compile_error", 4),
    "traceback": (TRACEBACK, "network", 9),
    "maven": (MAVEN, "compile_error", 5),
    "npm": (NPM, "not_found", 4),
}

JENKINS_PREAMBLE = """Started by user admin
Running as SYSTEM
Building in workspace /var/lib/jenkins/workspace/shop
The recommended git tool is: NONE
 > git rev-parse --resolve-git-dir /var/lib/jenkins/workspace/shop/.git # timeout=10
 > git init /var/lib/jenkins/workspace/shop # timeout=10
 > git fetch --tags --force --progress -- https://git.example.com/shop.git +refs/heads/*:refs/remotes/origin/* # timeout=10
[Pipeline] sh
+ pip install -r requirements.txt
Requirement already satisfied: requests in /usr/lib/python3/dist-packages (2.31.0)
Checking for errors: 0 errors, 0 failures
errorprone is disabled for this module
"""


@pytest.mark.parametrize("family", sorted(LOGS))
def test_decisive_block_span_and_category(store, family):
    text, category, line = LOGS[family]
    sig = store.error_signature(text)
    assert sig.category == category
    lo, hi = sig.excerpt_lines
    assert lo <= line <= hi and hi - lo < 10, (sig.excerpt_lines, sig.excerpt)
    lines = text.split("\n")
    assert lines[line - 1].split()[-1] in sig.excerpt


def test_echoed_commands_and_config_words_are_not_the_failure(store):
    sig = store.error_signature(JENKINS_PREAMBLE + GCC + "[Pipeline] End of Pipeline\nFinished: FAILURE\n")
    assert sig.category == "compile_error" and "unknown type name" in sig.message
    quiet = store.error_signature(JENKINS_PREAMBLE + "Finished: SUCCESS\n")
    assert quiet.category != "timeout"  # '# timeout=10' is configuration, not a failure


def _github(text: str, ts: str) -> str:
    return "".join(f"{ts} {ln}\n" for ln in text.split("\n"))


def _gh_cli(text: str, ts: str) -> str:
    return "".join(f"build\tRun tests\t{ts} {ln}\n" for ln in text.split("\n"))


def _ansi(text: str) -> str:
    return "\n".join(f"\x1b[1;31m{ln}\x1b[0m" if k % 2 else ln for k, ln in enumerate(text.split("\n")))


def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def _progress(text: str) -> str:  # a progress bar overwritten in place on the first line
    first, _, rest = text.partition("\n")
    return f"downloading  10%\rdownloading  55%\r{first}\n{rest}"


WRAPPERS = {
    "github": _github,
    "gh-cli": _gh_cli,
    "ansi": lambda t, ts: _ansi(t),
    "crlf": lambda t, ts: _crlf(t),
    "progress": lambda t, ts: _progress(t),
}


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    family=st.sampled_from(sorted(LOGS)),
    wrappers=st.lists(st.sampled_from(sorted(WRAPPERS)), max_size=3, unique=True),
    ts=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1)).map(
        lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.%f0Z")
    ),
)
def test_prefixes_and_colour_codes_never_change_a_signature(store, family, wrappers, ts):
    text = LOGS[family][0]
    plain = store.error_signature(text)
    for w in wrappers:
        text = WRAPPERS[w](text, ts)
    dressed = store.error_signature(text)
    assert (dressed.id, dressed.template, dressed.category) == (plain.id, plain.template, plain.category)
    assert dressed.excerpt_lines == plain.excerpt_lines  # prefixes add no lines; \r does not end one


NOISE = [
    "Downloading numpy-1.26.4.tar.gz (15.8 MB)",
    "Collecting requests>=2.31",
    "  Compiling serde v1.0.197",
    "ok 12 - parses headers",
    "Using cache: yes (errors: 0)",
    " > git checkout -f 4b1c2d3e # timeout=10",
    "+ export CFLAGS=-Werror",
    "[INFO] Building shop 1.0-SNAPSHOT",
    "warning: unused variable 'x'",
    "PASSED tests/test_cart.py::test_add",
    "##[group]Run actions/checkout@v4",
    "##[endgroup]",
    "",
]


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(sorted(LOGS)), noise=st.lists(st.sampled_from(NOISE), min_size=1, max_size=60))
def test_noise_before_the_failure_keeps_the_signature(store, family, noise):
    text = LOGS[family][0]
    plain = store.error_signature(text)
    noisy = store.error_signature("\n".join(noise) + "\n" + text)
    assert noisy.id == plain.id and noisy.category == plain.category
    assert noisy.excerpt_lines == (plain.excerpt_lines[0] + len(noise), plain.excerpt_lines[1] + len(noise))


@pytest.mark.parametrize("preamble_lines", [0, 1_000, 60_000])
def test_same_failure_in_logs_of_any_length_same_id(store, preamble_lines):
    pre = "".join(f"[INFO] compiled module {k} in 12 ms\n" for k in range(preamble_lines))
    base = store.error_signature(GCC)
    sig = store.error_signature(pre + GCC)
    assert sig.id == base.id and sig.excerpt_lines[0] == base.excerpt_lines[0] + preamble_lines


def test_logs_larger_than_any_content_limit_are_accepted(store):
    big = "".join(f"ok {k} - step {k} passed\n" for k in range(400_000)) + TRACEBACK  # ~10 MiB
    assert len(big) > 2 * WINDOW_CHARS
    sig = store.error_signature(big)
    assert sig.exception == "ConnectionError" and sig.frame == "sync.py:main"
    assert sig.excerpt_lines[1] == big.count("\n")
    advice = store.on_task_error({"id": "T1", "title": "sync invoices", "agent_id": "ci"}, big)
    assert advice.signature.id == sig.id
    mem = store.remember("retry with a longer timeout", type="success", agent_id="ci", error=big)
    assert (
        mem.error_signature == sig.id
        and len(
            json.loads(
                store._core.backend.execute("SELECT error_basis FROM memories WHERE id = ?", (mem.id,)).fetchone()[0]
            )["excerpt"]
        )
        <= 2000
    )


def test_a_failure_early_in_a_long_log_with_a_quiet_tail(store):
    tail = "".join(f"uploading artifact part {k}\n" for k in range(120_000))  # > the window, nothing failing
    sig = store.error_signature(MAVEN + tail)
    assert "cannot find symbol" in sig.message and sig.category == "compile_error"


def test_line_numbers_count_only_newlines():
    lines = clean_lines("a\rb\nc\r\nd")
    assert [(ln.no, ln.text) for ln in lines] == [(1, "b"), (2, "c"), (3, "d")]


def test_baseline_lines_are_not_the_failure(store):
    known = "src/util.c:3:1: error: deprecated API (tolerated, see docs)\n"
    passing = "gcc -c src/util.c\n" + known + "ok: built\n"
    failing = "gcc -c src/util.c\n" + known + GCC
    assert "deprecated API" in store.error_signature(failing).message
    sig = store.error_signature(failing, baseline=passing)
    assert "unknown type name" in sig.message and sig.category == "compile_error"
    advice = store.on_task_error({"id": "T2", "title": "build", "agent_id": "ci"}, failing, baseline=passing)
    assert advice.signature.id == sig.id


def test_secrets_in_the_decisive_block_are_redacted_before_storing(store):
    log = "deploy\nError: auth failed for https://deploy:hunter2secretpw@registry.example.com/v2/ (401)\n"
    sig = store.error_signature(log)
    assert "hunter2secretpw" not in sig.excerpt and "hunter2secretpw" not in sig.template
    stored = store._core.backend.execute("SELECT tokens FROM error_templates").fetchall()
    assert all("hunter2secretpw" not in r[0] for r in stored)


def test_resign_moves_stored_signatures_and_merges_the_ledger(store):
    err = "ModuleNotFoundError: No module named 'yaml'"
    m = store.learn_success("a", "pip install pyyaml", error=err)
    store.record_outcome("T1", "fresh_start", True, error=err)
    store.record_outcome("T2", "fresh_start", False, error=err)
    current = m.error_signature
    b = store._core.backend
    with b.write() as c:  # as an older method would have left it: two old ids for one error
        for _k, old in enumerate(("err_0000000000000001", "err_0000000000000002")):
            c.execute(
                "INSERT INTO error_templates(sig, partition, tokens, category, exception, rev, created_at, "
                "updated_at) VALUES (?, '5|ModuleNotFoundError:|', ?, 'import_error', 'ModuleNotFoundError', "
                "90, 0, 0)",
                (old, json.dumps(["ModuleNotFoundError:", "No", "module", "named", "'<*>'"])),
            )
        c.execute("UPDATE memories SET error_signature = 'err_0000000000000001', error_basis = NULL")
        c.execute("UPDATE task_attempts SET error_signature = 'err_0000000000000002', error_basis = NULL")
        c.execute("UPDATE fix_links SET error_signature = 'err_0000000000000001'")
        c.execute("UPDATE technique_effectiveness SET error_key = 'err_0000000000000001' WHERE level = 'signature'")
        c.execute(
            "INSERT INTO technique_effectiveness(technique, level, error_key, error_category, successes, "
            "failures, attempts, first_used, last_used) VALUES ('fresh_start', 'signature', "
            "'err_0000000000000002', 'import_error', 3, 1, 4, 0, 0)"
        )
        c.execute(
            "INSERT INTO signature_state(id, method, updated_at) VALUES (1, 1, 0) "
            "ON CONFLICT(id) DO UPDATE SET method = excluded.method, updated_at = excluded.updated_at"
        )
    run = store.run_job("resign")
    assert run.status == "ok" and run.counts["changed"] == 2
    assert store.get(m.id).error_signature == current
    rows = store.technique_stats(level="signature")
    assert [(r["error_key"], r["successes"], r["failures"]) for r in rows] == [(current, 4, 2)]
    assert {a.error_signature for a in store.task_attempts("T1")} == {current}
    assert store._core.miner.canonical("err_0000000000000001") == current
    assert store.on_task_error({"id": "T3", "title": "x", "agent_id": "a"}, err).fixes
    again = store.run_job("resign")
    assert again.counts == {"signatures": 0, "changed": 0, "up_to_date": 1, "fix_kinds": 0}
    state = b.execute("SELECT method FROM signature_state").fetchone()[0]
    assert state == SIGNATURE_METHOD


def test_signing_speed_is_linear_in_the_window_not_the_log(db_path):
    # not a timed test: the work done is bounded by the window, whatever the log size
    import harness_memory.failure_excerpt as fe

    seen = []
    real = fe.clean_lines

    def counting(text, first_no=1):
        seen.append(len(text))
        return real(text, first_no)

    fe.clean_lines = counting
    try:
        with MemoryStore(db_path) as s:
            s.error_signature("x\n" * (3 * WINDOW_CHARS) + GCC)
    finally:
        fe.clean_lines = real
    assert seen and max(seen) <= WINDOW_CHARS + 200


def test_a_rust_panic_is_signed_with_its_message_not_its_location(store):
    """Rust >= 1.73 prints `panicked at file:line:col:` and the message on the next line: every
    panic shares the first line's template, so the message decides the signature and category."""

    def panic(test: str, where: str, message: str) -> str:
        return (
            f"running 2 tests\ntest {test} ... FAILED\n\nfailures:\n\n---- {test} stdout ----\n"
            f'thread \'{test}\' (4242) panicked at {where}:\n{message}\n  left: "a"\n right: "b"\n'
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n"
            "test result: FAILED. 1 passed; 1 failed\nerror: test failed, to rerun pass `--lib`\n"
        )

    eq = store.error_signature(panic("tests::trims", "src/lib.rs:38:9", "assertion `left == right` failed"))
    eq2 = store.error_signature(panic("tests::other", "src/util.rs:12:5", "assertion `left == right` failed"))
    unwrap = store.error_signature(
        panic("tests::reads", "src/lib.rs:51:30", "called `Option::unwrap()` on a `None` value")
    )
    assert eq.category == "assertion" and "failed" in eq.message
    assert eq.id == eq2.id  # the same failure at another place and in another test
    assert unwrap.id != eq.id


def test_go_test_and_module_idioms_get_their_categories(store):
    got_want = (
        "--- FAIL: TestKeys (0.00s)\n    store_test.go:33: Keys(user:) = [user:3 user:1], want [user:1 user:3]\nFAIL\n"
    )
    assert store.error_signature(got_want).category == "assertion"
    missing = (
        "main.go:7:2: no required module provides package github.com/acme/widgets; to add it:\n"
        "\tgo get github.com/acme/widgets\n"
    )
    assert store.error_signature(missing).category == "import_error"
    npm = "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@acme%2fui-kit - Not found\n"
    assert store.error_signature(npm).category == "import_error"
