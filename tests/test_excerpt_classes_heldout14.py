"""Classes met in the heldout14 split of the CI-log corpus (its first run: tests/fixtures/ci_logs/README.md, "The
`heldout14` split") that are method, not one file's words (signing method 28), each written as a general property
and tested on other words than the split's logs (no ld ``multiple definition``, no ``not in gzip format``, no Go
template, no pip check, no ``line 401`` of concurrent.futures here):

1. a status line saying a tool gave up because of what was printed above it (``collect2: error: ld returned 1 exit
   status``, ``tar: Child returned status 1``, ``tar: Error is not recoverable: exiting now``, TAP::Harness's ``Failed
   2/5 subtests``) and a runner's bare closing ``failed`` are trailers: the statement above is signed; a date-stamped
   log line right above a trailer is what the program logged as it gave up (Go's ``log.Fatal``); Test::More's ``#
   Looks like you planned N tests but ran M.`` is a statement;
2. Jenkins's ``Commit message: "..."`` is a person's words, never the failure;
3. an assembly source's ``file:line: Error: ...`` is a compiled language's diagnostic (compile_error);
4. a number in a location's role (``line 429``, ``x.py:403:``, ``a.js:401:7``) is no HTTP status; in a status's
   role it still is;
and Ruby's core exception hierarchy in the failure lexicon (tests/test_failure_lexicon.py)."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import _by_text, categorize
from harness_memory.failure_excerpt import extract

_NAME = st.text(alphabet=string.ascii_lowercase, min_size=2, max_size=10)
# words with no failure word in them (a statement the classes do not weigh): letters and spaces only, from a
# vocabulary of plain words
_PLAIN = st.lists(
    st.sampled_from(["symbol", "section", "value", "table", "stream", "header", "record", "format", "index", "entry"]),
    min_size=3,
    max_size=8,
).map(" ".join)


# -- 1. a tool giving up because of what was printed above it -------------------------------------------------------------
@given(prog=_NAME, said=_PLAIN, status=st.integers(1, 255))
@settings(max_examples=60, deadline=None)
def test_a_drivers_exit_status_line_gives_way_to_the_complaint_above(prog, said, status):
    complaint = f"/usr/bin/{prog}: build/x.o: {said}"
    text = f"cc -o build/app build/x.o\n{complaint}\ncollect2: error: {prog} returned {status} exit status\n"
    text += "make: *** [Makefile:8: build/app] Error 1\n"
    ex = extract(text)
    assert ex.lines == (2, 2) and ex.message == complaint


@given(prog=_NAME, said=_PLAIN, status=st.integers(1, 255))
@settings(max_examples=60, deadline=None)
def test_tars_closing_lines_give_way_to_the_child_programs_complaint(prog, said, status):
    complaint = f"{prog}: stdin: {said}"
    for closing in (
        "tar: Error is not recoverable: exiting now",
        "tar: Exiting with failure status due to previous errors",
    ):
        ex = extract(f"\n{complaint}\ntar: Child returned status {status}\n{closing}\n")
        assert ex.lines == (2, 2) and ex.message == complaint


def test_the_trailer_still_gives_the_category_of_the_report_it_closes():
    # a linker's complaint without a category word: the driver's ``ld returned 1 exit status`` says it is the link
    text = "/usr/bin/ld: build/b.o:(.bss+0x0): symbol section value table index\ncollect2: error: ld returned 1 exit status\n"
    ex = extract(text)
    assert ex.lines == (1, 1)
    assert categorize(ex) == "compile_error"


@given(planned=st.integers(2, 99), data=st.data())
@settings(max_examples=40, deadline=None)
def test_tap_plan_mismatch_is_the_statement_not_the_harness_count(planned, data):
    ran = data.draw(st.integers(0, planned - 1))
    text = (
        "t/a.t .... ok\n"
        f"# Looks like you planned {planned} tests but ran {ran}.\n"
        "t/b.t .... \n"
        "Dubious, test returned 255 (wstat 65280, 0xff00)\n"
        f"Failed {planned - ran}/{planned} subtests \n"
    )
    ex = extract(text)
    assert ex.lines[0] == 2
    assert categorize(ex) == "test_failure"


@pytest.mark.parametrize(
    "other",
    ["# Looks like you failed 2 tests of 5.", "# Looks like your test exited with 255 just after 3."],
)
def test_test_mores_other_closing_lines_are_no_statement(other):
    text = "not ok 3 - parses dates\n#   Failed test 'parses dates'\n#   at t/d.t line 9.\n" + other + "\n"
    assert extract(text).lines[0] in (1, 2)


@given(words=_PLAIN, runner_end=st.sampled_from(["failed", "FAILED", "failure"]))
@settings(max_examples=40, deadline=None)
def test_a_logged_statement_before_exit_status_is_signed_not_the_runners_closing_word(words, runner_end):
    text = f"+ go run ./cmd/gen\n2026/01/02 03:04:05 render: {words}\nexit status 1\n{runner_end}\n"
    ex = extract(text)
    assert ex.lines == (2, 2) and ex.message == f"render: {words}"


def test_a_bare_failed_is_a_trailer_after_a_real_failure():
    text = "+ ./check.sh\ncheck.sh: line 4: jq: command not found\nfailed\n"
    ex = extract(text)
    assert ex.lines == (2, 2)


# -- 2. a runner quoting the commit message ---------------------------------------------------------------------------------
@given(subject=st.text(alphabet=string.ascii_letters + " :!", min_size=1, max_size=60))
@settings(max_examples=60, deadline=None)
def test_a_commit_message_line_is_never_the_failure(subject):
    failing = "+ pytest -q\nE   KeyError: 'region'\nscript returned exit code 1\n"
    for subj in (subject, f"Fix timeout errors {subject}", f"Revert permission denied {subject}"):
        noisy = f'Checking out Revision abc123 (refs/remotes/origin/main)\nCommit message: "{subj}"\n' + failing
        assert extract(noisy).message == extract(failing).message


# -- 3. an assembler's diagnostic ------------------------------------------------------------------------------------------
@given(
    path=st.sampled_from(["src/boot.S", "arch/x86/entry.s", "lib/mem.asm", "k/start.sx"]),
    line=st.integers(1, 9999),
    msg=st.sampled_from(
        [
            "no such instruction: `movx %eax,%ebx'",
            "junk at end of line, first unrecognized character is `,'",
            "bad register name `%rxx'",
            "unknown pseudo-op: `.sectoin'",
        ]
    ),
)
@settings(max_examples=40, deadline=None)
def test_an_assemblers_located_error_is_a_compile_error(path, line, msg):
    text = f"Assembler messages:\n{path}:{line}: Error: {msg}\nmake: *** [Makefile:3: all] Error 1\n"
    ex = extract(text)
    assert ex.lines[0] in (1, 2)
    assert categorize(ex) == "compile_error"


# -- 4. a number in a location's role ---------------------------------------------------------------------------------------
# a name that is no category word of its own (``ssl`` is network, ``denied`` permission: hypothesis found ``in ssl``;
# ``failed`` is a verdict in a frame's function name, ``in failed``: the forms below with a number that is no status)
def _locations(name: str, code: str, col: int) -> tuple[str, ...]:
    return (
        f'  File "/srv/{name}/app.py", line {code}, in {name}',
        f"{name}.py, line {code}, in {name}",
        f"src/{name}.py:{code}: in {name}",
        f"at {name} ({name}.js:{code}:{col})",
        f"error at line {code} of {name}.cfg",
    )


_PLAIN_NAME = _NAME.filter(
    lambda n: _by_text(f"{n} in {n}.py") is None and all(_by_text(loc) is None for loc in _locations(n, "7", 3))
)


@given(
    code=st.sampled_from(["401", "403", "404", "429", "502", "503", "504"]), name=_PLAIN_NAME, col=st.integers(1, 200)
)
@settings(max_examples=60, deadline=None)
def test_a_location_number_is_no_http_status(code, name, col):
    for loc in _locations(name, code, col):
        assert _by_text(loc) is None, loc


@pytest.mark.parametrize(
    ("text", "cat"),
    [
        ("HTTP 429 Too Many Requests", "rate_limit"),
        ("Failed to request /api/whoami-v2 - 429", "rate_limit"),
        ("status:403", "permission"),
        ("server answered 401", "permission"),
        ("Error: 403", "permission"),
        ("upstream returned 502", "network"),
        ("GET /v1/items/9 -> 404", "not_found"),
    ],
)
def test_a_status_number_is_still_read_as_one(text, cat):
    assert _by_text(text) == cat


def test_a_traceback_frame_line_number_does_not_decide_the_category(tmp_path):
    store = MemoryStore(str(tmp_path / "m.db"))
    try:
        for code in ("401", "403", "429"):
            sig = store.error_signature(f'  File "/srv/w/x.py", line {code}, in f\n    g()\nValueError: bad value\n')
            assert sig.category not in ("permission", "rate_limit")
            assert store.error_signature(f"x.py, line {code}, in f").category not in ("permission", "rate_limit")
    finally:
        store.close()


# the status-number pattern before the digit guard was put first (4874fdd): the oracle for the faster one
_STATUS_NUMBER_BEFORE = (
    r"(?<!line )(?<!lines )(?<!\.\w:)(?<!\.\w\w:)(?<!\.\w\w\w:)(?<!\.\w\w\w\w:)(?<!_p_:)\b{}\b(?!:\d)"
)


@given(
    code=st.sampled_from(["429", "40[13]", "50[234]", "404"]),
    text=st.lists(
        st.sampled_from(
            ["line ", "lines ", "a.py:", "x.sx:", "_p_:", "429", "401", "403", "404", "503", ":1", " ", "e", "4"]
        ),
        max_size=12,
    ).map("".join),
)
@settings(max_examples=300, deadline=None)
def test_the_status_number_finds_what_it_found_before_the_digit_guard(code, text):
    import re

    from harness_memory.error_signatures import _STATUS_NUMBER

    before = re.compile(_STATUS_NUMBER_BEFORE.format(code))
    now = re.compile(_STATUS_NUMBER.format(code))
    assert [m.span() for m in now.finditer(text)] == [m.span() for m in before.finditer(text)]
