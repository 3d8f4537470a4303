"""Classes met in the heldout21 split of the CI-log corpus (its first run: tests/fixtures/ci_logs/README.md, "The
`heldout21` split"), each written as a general rule (failure_excerpt's line shapes, error_signatures' words) and tested
on inputs of other tools and words than the split's logs, with neighbours that keep their category; the split's logs,
one test per log family, are in tests/test_ci_corpus.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import clean_lines, extract


def category(text: str) -> str:
    return categorize(extract(text))


# -- excerpt: a 12-hour clock before every line; make's fatal error in a makefile; an echo is never the excerpt ------


@pytest.mark.parametrize(
    "stamp",
    ["7:52:36 AM: ", "11:02:09 PM: ", "7:52:36 am ", "07:52:36.512 PM ", "12:00:00 AM: "],
)
def test_a_12_hour_clock_before_every_line_is_a_stamp(stamp):
    body = [
        "Installing missing commands",
        "$ npm run build",
        "Traceback (most recent call last):",
        '  File "build.py", line 3, in <module>',
        "    json.loads(open('cache.json').read())",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        "",
    ]
    log = "\n".join(stamp + ln if ln else stamp.rstrip() for ln in body)
    ex = extract(log)
    assert ex.message.startswith("json.decoder.JSONDecodeError"), ex.message
    assert categorize(ex) == "compile_error"
    assert [ln.text for ln in clean_lines(log)][:2] == ["Installing missing commands", "$ npm run build"]


@pytest.mark.parametrize(
    "line",
    [
        "12:34:56 error: expected ';'",  # a 24-hour stamp (as before: stripped)
        "7:52: error: expected ';'",  # a line and a column, not a clock
        "main.c:7:52:36: error: x",  # a file's line and column
        "7:52:36 AMOUNT due",  # a word that begins with AM
    ],
)
def test_what_is_no_12_hour_clock_keeps_its_words(line):
    text = clean_lines(line)[0].text
    if line.startswith("12:34:56 "):
        assert text == "error: expected ';'"
    else:
        assert text == line


@pytest.mark.parametrize(
    "line",
    [
        "Makefile:6: *** Recursive variable 'CFLAGS' references itself (eventually).  Stop.",
        "build/rules.mk:41: *** missing separator.  Stop.",
        "GNUmakefile:12: *** commands commence before first target.  Stop.",
        "src/Makefile.inc:3: *** unterminated variable reference.  Stop.",
    ],
)
def test_makes_fatal_error_in_a_makefile_is_the_failure_and_a_compile_error(line):
    log = f"+ make clean\nrm -rf build\n+ make DEBUG=1\n{line}\n"
    ex = extract(log)
    assert ex.message == line
    assert ex.lines == (4, 4)
    assert categorize(ex) == "compile_error"


def test_makes_own_fatal_error_keeps_its_category():
    # make's own words, without a makefile's line: no makefile at all is a thing not found, as before
    assert category("+ make\nmake: *** No targets specified and no makefile found.  Stop.\n") == "not_found"
    assert category("make: *** No rule to make target 'install'.  Stop.\n") == "not_found"


@pytest.mark.parametrize(
    "log, expected",
    [
        ("+ make clean\nrm -rf build\n+ make all\nsomething odd happened\n", "rm -rf build"),
        ("$ ./deploy.sh\n$ echo done\nsomething odd\n", "something odd"),
        ("Run ./ci/check.sh\nnothing to see\n", "nothing to see"),
    ],
)
def test_the_last_resort_never_takes_an_echoed_command(log, expected):
    assert extract(log).message == expected


def test_a_log_of_echoes_only_still_gets_an_excerpt():
    assert extract("+ make clean\n+ make all\n").message == "+ make clean"


# -- categories --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # a host name that does not resolve is the network's failure, not a thing the program looked up
        ('nginx: [emerg] host not found in upstream "api.internal:8080" in /etc/nginx/conf.d/app.conf:12', "network"),
        ("curl: (6) Could not resolve host: registry.example.org", "network"),
        ("dial tcp: lookup db.internal on 127.0.0.53:53: no such host", "network"),
        ("ssh: Could not resolve hostname git.example.com: Name or service not known", "network"),
        ("ERROR: unknown host repo.example.net", "network"),
        ("psql: error: hostname not found: db.internal", "network"),
        ("Server not found: smtp.example.com", "network"),
        # a build target, a revision or a ref that does not exist; a setting git needs that is not set
        ("make: *** No rule to make target 'docs'.  Stop.", "not_found"),
        ("ninja: error: unknown target 'check'", "not_found"),
        ("error: unknown target 'wasm64-unknown-unknown'", "not_found"),
        ("ERROR: unknown task 'deploy' (run `invoke --list`)", "not_found"),
        ("fatal: ambiguous argument 'main..HEAD': unknown revision or path not in the working tree.", "not_found"),
        ("error: pathspec 'feature/x' did not match any file(s) known to git", "not_found"),
        ('*** Please tell me who you are.\n\nRun\n\n  git config --global user.email "you@example.com"', "not_found"),
        ("fatal: unable to auto-detect email address (got 'ci@runner.(none)')", "not_found"),
        # the interpreter a package asks for is not the one installed (as npm's EBADENGINE)
        ("ERROR: Package 'acme' requires a different Python: 3.9.18 not in '>=3.10'", "not_found"),
        # a value of the wrong shape for the names it is unpacked into; an operation the value does not support
        ("ValueError: not enough values to unpack (expected 3, got 2)", "type_error"),
        ("    a, b = row\nValueError: too many values to unpack (expected 2)", "type_error"),
        (
            'Exception in thread "main" java.lang.UnsupportedOperationException\n'
            "\tat java.base/java.util.ImmutableCollections.uoe(ImmutableCollections.java:142)",
            "type_error",
        ),
        ("UnsupportedOperationException: remove", "type_error"),
        # a package the runtime cannot find
        ("can't find package tcllib 1.21", "import_error"),
        ('main.go:4:2: cannot find package "github.com/acme/x" in any of:', "import_error"),
        # a process killed by its own alarm: a timer ran out
        ("make: *** [Makefile:9: check] Alarm clock", "timeout"),
        ("/bin/sh: line 1: 4321 Alarm clock             ./slow_test", "timeout"),
        # two files compared byte by byte that differ: a golden file's comparison
        ("out/render.png expected/render.png differ: byte 4097, line 12", "assertion"),
        ("cmp: EOF on out/font.bin after byte 10, in line 1", "assertion"),
        ("out.txt golden.txt differ: char 3, line 1", "assertion"),
        # node's code of a module that cannot be loaded decides over its class
        (
            'TypeError [ERR_IMPORT_ATTRIBUTE_MISSING]: Module "file:///app/data.json" needs an import attribute of '
            '"type: json"',
            "import_error",
        ),
        (
            'TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".ts" for /app/src/index.ts',
            "import_error",
        ),
        ("Error [ERR_UNSUPPORTED_DIR_IMPORT]: Directory import '/app/lib' is not supported", "import_error"),
    ],
)
def test_heldout21_classes_in_other_words(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # neighbours that keep their category
        (
            'TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string. Received undefined',
            "type_error",
        ),
        ("Error: Cannot find module './util'", "import_error"),
        ("FileNotFoundError: [Errno 2] No such file or directory: 'hosts.txt'", "not_found"),
        ("KeyError: 'host'", "not_found"),
        ("go: example.com/x@v9.9.9: unknown revision v9.9.9", "import_error"),
        # an exception the table names whose words name nothing (.NET's, which the failure lexicon does not hold)
        (
            "Unhandled exception. System.InvalidCastException: Specified cast is not valid.\n"
            "   at Program.Main() in /src/Program.cs:line 9",
            "type_error",
        ),
    ],
)
def test_neighbours_keep_their_category(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, not_this",
    [
        # words near the new ones that name no such failure
        ("error: the alarm was raised by the health check", "timeout"),
        ("error: Files a.txt and b.txt differ", "assertion"),
        ("ERROR: Package 'acme' requires Python '>=3.10' but the running Python is 3.9.18", "not_found"),
        ("error: the host was found but refused the key", "network"),
        ("error: unknown option: --colour", "not_found"),
    ],
)
def test_words_near_the_new_ones_do_not_take_their_category(text, not_this):
    assert category(text) != not_this


@settings(max_examples=60, deadline=None)
@given(
    host=st.from_regex(r"[a-z]{2,12}(?:\.[a-z]{2,8}){1,3}", fullmatch=True),
    tool=st.sampled_from(["nginx: [emerg]", "error:", "ERROR", "fatal:"]),
)
def test_a_host_that_does_not_resolve_is_network_whatever_the_name(host, tool):
    assert category(f"{tool} host not found: {host}") == "network"
    assert category(f"{tool} lookup {host}: no such host") == "network"


def test_signing_a_netlify_log_reads_the_failure_under_its_stamps(tmp_path):
    log = "\n".join(
        f"7:52:{i:02d} AM: {ln}"
        for i, ln in enumerate(
            [
                "Installing missing commands",
                "$ npm run build",
                "> site@1.0.0 build",
                "SyntaxError: Unexpected end of JSON input",
                "    at JSON.parse (<anonymous>)",
                "    at Object.<anonymous> (/opt/build/repo/scripts/fetch.js:6:23)",
            ]
        )
    )
    with MemoryStore(tmp_path / "m.db") as store:
        sig = store.error_signature(log)
    assert sig.message.startswith("SyntaxError: Unexpected end of JSON input")
    assert sig.category == "compile_error"
