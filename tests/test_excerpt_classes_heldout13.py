"""Excerpt classes met in the heldout13 split of the CI-log corpus (its first run: tests/fixtures/ci_logs/README.md,
"The `heldout13` split"), each written as a general property of failure_excerpt and tested on the words of other
tools than the split's logs (chown, sed, ssh, gcc's analyzer, ThreadSanitizer, mkdocs and bandit are not used here):

1. a failure line without a failure word: a program's complaint ending in the system's error message (``touch: ...:
   Operation not permitted``), a program's complaint in its own words when nothing else is said (``grep: Unmatched (
   or \\(``), a banner of capitals (ssh's other banners);
2. a closing line points back at the report above it: a closing line saying the warnings failed the build (ESLint's
   ``found too many warnings``, Elixir's ``failed due to warnings``) at the warnings, a trailer with nothing specific
   in its step (``make: *** [test] Error 77``) at a ``WARNING:``-tagged report (MemorySanitizer's);
3. counts that are all zero (``Killed: 0``, pylint's ``|error |0 |`` rows) are no failure, and a finding is the line
   a ``Severity:`` line rates (npm audit);
and two shapes the new runners exposed: a runner's column naming a step (Tekton's ``[task : step]``, Drone's
``[step:L12:3s]``) is a line prefix, and an exception named with its code (node's ``RangeError [ERR_OUT_OF_RANGE]:``)
is a statement."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.failure_excerpt import Line, _classify, clean_lines, extract

_WORDS = st.text(alphabet=string.ascii_letters + string.digits + " .,;'\"()/_-=", min_size=1, max_size=80).filter(
    lambda s: s.strip() == s and s[:1].isalpha()
)


def _cls(text: str) -> int:
    (ln,) = clean_lines(text)
    _classify(ln)
    return ln.cls


# -- 1. a failure line without a failure word --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "complaint",
    [
        "touch: setting times of '/var/log/app/access.log': Operation not permitted",
        "chmod: changing permissions of '/etc/app/app.conf': Read-only file system",
        "cp: error writing 'dist/bundle.tar': No space left on device",
        "rmdir: failed to remove 'build': Directory not empty",
        "ln: failed to create symbolic link 'releases/current': File exists",
        "/usr/bin/install: cannot create regular file '/opt/tool/bin/tool': Text file busy",
    ],
)
def test_a_programs_complaint_ending_in_the_systems_message_is_a_statement(complaint):
    assert _cls(complaint) >= 3
    for text in (
        f"copying release files\n{complaint}\n",
        f"+ ./release.sh\ncopying release files\n{complaint}\nmake: *** [Makefile:9: release] Error 1\n",
    ):
        ex = extract(text)
        assert ex.message == complaint, text


def test_the_systems_message_alone_is_not_a_programs_complaint():
    # a setting, a label (capitalised) or a note naming the message is not a program reporting it
    assert _cls("Location: /srv/data: File exists") < 3
    assert _cls("note: retrying after: Connection reset by peer") < 3


@pytest.mark.parametrize(
    "complaint",
    [
        "grep: Unmatched ( or \\(",
        "cut: the delimiter must be a single character",
        "find: unknown predicate `-mtim'",
        "tr: when translating, the only character classes that may appear in string2 are 'upper' and 'lower'",
    ],
)
def test_a_programs_complaint_in_its_own_words_when_nothing_else_is_said(complaint):
    narration = "collecting changed files since v1.3.0"
    ex = extract(f"{narration}\n{complaint}\n")
    assert ex.message == complaint and ex.lines == (2, 2)
    # with a trailer that closes it: the trailer points back at the complaint
    ex = extract(f"{narration}\n{complaint}\nmake: *** [Makefile:4: changed] Error 2\n")
    assert ex.message == complaint and ex.lines == (2, 2)
    # a stronger statement elsewhere still wins: the complaint only speaks when nothing else does
    ex = extract(
        f"{narration}\n{complaint}\nTraceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'\n"
    )
    assert ex.message == "KeyError: 'a'"


def test_only_the_failing_commands_last_words_are_its_complaint():
    # what an earlier command printed (git's progress) is not what the failing one said
    fetch = [
        "remote: Enumerating objects: 12, done.",
        "remote: Counting objects: 100% (12/12), done.",
        "remote: Total 12 (delta 3), reused 9 (delta 1), pack-reused 0",
    ]
    text = "\n".join([*fetch, "waiting for the broker", "probe 1", "probe 2", "probe 3", "exit code 124"])
    ex = extract(text)
    assert ex.kind == "trailer" and ex.lines == (8, 8)
    # with no trailer and no statement, the last complaint is the failing command's
    text = "\n".join([*fetch, "tagging the release", "cut: the delimiter must be a single character"])
    assert extract(text).lines == (5, 5)


def test_a_banner_of_capitals_is_the_report_when_nothing_else_is_said():
    text = "\n".join(
        [
            "connecting to the staging bastion",
            "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
            "@       WARNING: POSSIBLE DNS SPOOFING DETECTED!          @",
            "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
            "The ECDSA host key for bastion.example.org has changed,",
            "and the key for the corresponding IP address 10.0.4.7",
            "is unknown. This could either mean that",
            "DNS SPOOFING is happening or the IP address for the host",
        ]
    )
    ex = extract(text)
    assert ex.message == "WARNING: POSSIBLE DNS SPOOFING DETECTED!" and ex.lines is not None and ex.lines[0] == 3
    # a framed line in lower case (an update notice's box) is no banner
    ex = extract("building the docs\n|   New major version of npm available! 10.8.2 -> 11.0.0   |\n")
    assert ex.lines == (1, 1)


# -- 2. a closing line points back at the report above it ------------------------------------------------------------
def test_a_closing_line_about_warnings_points_back_at_them():
    # ESLint run with --max-warnings 0 (its stylish format)
    text = "\n".join(
        [
            "> web@1.0.0 lint",
            "> eslint --max-warnings 0 src",
            "",
            "/home/runner/work/web/src/api.js",
            "  12:5  warning  Unexpected console statement  no-console",
            "",
            "\u2716 1 problem (0 errors, 1 warning)",
            "",
            "ESLint found too many warnings (maximum: 0).",
        ]
    )
    ex = extract(text)
    assert "Unexpected console statement" in ex.message and ex.lines == (5, 5)
    # Elixir's --warnings-as-errors, level-tagged warnings of a site generator: the first warning
    text = "\n".join(
        [
            "$ mix compile --warnings-as-errors",
            'warning: variable "conn" is unused (if the variable is not meant to be used, prefix it with an underscore)',
            "  lib/web/router.ex:14: Web.Router.call/2",
            "",
            "Compilation failed due to warnings while using the --warnings-as-errors option",
        ]
    )
    ex = extract(text)
    assert ex.lines is not None and ex.lines[0] == 2 and "Compilation failed" in ex.detail
    text = "\n".join(
        [
            "INFO    -  Building documentation to directory: /srv/site",
            "WARNING -  Doc file 'guide.md' contains an unrecognized relative link 'setup/', it was left as is.",
            "Aborted with 1 warnings in strict mode!",
        ]
    )
    assert extract(text).lines == (2, 2)


def test_warnings_another_step_printed_are_not_pointed_at():
    text = "\n".join(
        [
            "WARNING -  Config value 'theme.palette' is deprecated",
            "+ mkdocs build --strict",
            "Aborted with 0 warnings in strict mode!",
        ]
    )
    assert extract(text).lines == (3, 3)  # the warning above the step's echo belongs to another step


def test_a_trailer_points_back_at_the_report_its_command_printed():
    # MemorySanitizer's report is worded WARNING; make's Error 77 closes it
    text = "\n".join(
        [
            "clang -fsanitize=memory -g -O1 -o parse parse.c",
            "./parse fixtures/header.bin",
            "==23104==WARNING: MemorySanitizer: use-of-uninitialized-value",
            "    #0 0x4a2b1c in read_header /src/parse.c:31:9",
            "    #1 0x4a2f80 in main /src/parse.c:58:5",
            "",
            "SUMMARY: MemorySanitizer: use-of-uninitialized-value /src/parse.c:31:9 in read_header",
            "Exiting",
            "make: *** [Makefile:6: check] Error 77",
        ]
    )
    ex = extract(text)
    assert ex.message.startswith("MemorySanitizer: use-of-uninitialized-value") and ex.lines == (3, 5)
    # a trailer with nothing to point back at stays the excerpt (an exit status is then the only evidence)
    text = "waiting for the broker on 127.0.0.1:5672\n##[error]Process completed with exit code 124.\n"
    ex = extract(text)
    assert ex.kind == "trailer" and ex.lines == (2, 2)


def test_a_runners_echo_of_the_script_is_no_report():
    text = "\n".join(
        [
            "##[group]Run timeout 3 ./scripts/wait-for-broker.sh",
            "timeout 3 ./scripts/wait-for-broker.sh",
            "shell: /usr/bin/bash -e {0}",
            "##[endgroup]",
            "waiting for the broker",
            "##[error]Process completed with exit code 124.",
        ]
    )
    ex = extract(text)
    assert ex.kind == "trailer" and ex.lines == (6, 6)


# -- 3. zero counts are no failure; a finding is the line its severity rates -------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    label=st.sampled_from(
        ["Undefined", "Errors", "Killed", "Aborted", "Missing", "Invalid", "Denied", "Fatal", "Timeouts", "Exceptions"]
    ),
    more=st.lists(st.sampled_from(["Failed", "Crashed", "Not found", "Unresolved"]), max_size=3),
    sep=st.sampled_from([": ", ":", "=", " = ", ":  "]),
    indent=st.sampled_from(["", "  ", "\t\t"]),
)
def test_counts_that_are_all_zero_are_no_failure(label, more, sep, indent):
    line = indent + ", ".join(f"{w}{sep}0" for w in [label, *more])
    assert _cls(line) == 0
    # a count that is not zero keeps whatever class its words give it
    assert _cls(indent + f"{label}{sep}3") == _cls(indent + f"{label}{sep}3 ")


def test_a_report_tables_zero_rows_are_no_failure():
    # pylint --reports=y: "Messages by category"
    for row in ("|error      |0      |NC       |NC         |", "|fatal      |0      |0        |=          |"):
        assert _cls(row) == 0
    assert _cls("|error      |2      |NC       |NC         |") == 2


def test_a_finding_is_the_line_its_severity_rates():
    text = "\n".join(
        [
            "+ npm audit --audit-level=high",
            "# npm audit report",
            "",
            "minimist  <1.2.6",
            "Severity: critical",
            "Prototype Pollution in minimist - https://github.com/advisories/GHSA-xvch-5gv4-984h",
            "fix available via `npm audit fix`",
            "node_modules/minimist",
            "",
            "1 critical severity vulnerability",
        ]
    )
    ex = extract(text)
    assert ex.message == "minimist  <1.2.6" and ex.lines is not None and ex.lines[0] == 4


# -- the runners' step columns and an exception named with its code ----------------------------------------------------
_STEP = st.text(alphabet=string.ascii_lowercase + string.digits + "-", min_size=1, max_size=20).filter(
    lambda s: s[0].isalpha()
)


@settings(max_examples=200, deadline=None)
@given(task=_STEP, step=_STEP, n=st.integers(0, 99999), secs=st.integers(0, 9999), message=_WORDS)
def test_a_runners_step_column_is_stripped(task, step, n, secs, message):
    for raw in (f"[{task} : {step}] {message}", f"[{step}:L{n}:{secs}s] {message}"):
        (line,) = clean_lines(raw)
        assert line.text == message.rstrip()
    (line,) = clean_lines(f"[ERROR] {message}")  # a level tag has neither shape: it stays evidence
    assert line.level == "error"


@pytest.mark.parametrize("column", ["[unit-tests : run] ", "[test:L{n}:{s}s] ", ""])
def test_a_log_under_a_step_column_is_read_as_the_plain_log(column):
    plain = [
        "+ gcc -Wall -Werror -c src/ring.c",
        "src/ring.c: In function 'ring_push':",
        "src/ring.c:22:17: error: 'cap' undeclared (first use in this function)",
        "   22 |     if (r->n == cap) return -1;",
        "      |                 ^~~",
        "make: *** [Makefile:3: ring.o] Error 1",
    ]
    text = "\n".join(column.format(n=k, s=k // 3) + ln for k, ln in enumerate(plain))
    ex = extract(text)
    assert ex.message.startswith("src/ring.c:22:17: error:") and ex.lines == (3, 5)


@pytest.mark.parametrize(
    "exc_line,name",
    [
        (
            'RangeError [ERR_OUT_OF_RANGE]: The value of "offset" is out of range. It must be >= 0. Received -1',
            "RangeError",
        ),
        (
            "Error [ERR_REQUIRE_ESM]: require() of ES Module /app/node_modules/chalk/source/index.js not supported.",
            "Error",
        ),
    ],
)
def test_an_exception_named_with_its_code_is_the_statement(exc_line, name):
    text = "\n".join(
        [
            "> report@2.0.0 build",
            "node:internal/buffer:86",
            "  throw new ERR_OUT_OF_RANGE(type || 'offset',",
            "  ^",
            "",
            exc_line,
            "    at boundsError (node:internal/buffer:86:9)",
            "    at Buffer.readUInt32LE (node:internal/buffer:222:5)",
            "",
            "Node.js v20.20.2",
        ]
    )
    ex = extract(text)
    assert ex.message == exc_line and ex.exception == name and ex.lines is not None and ex.lines[0] == 6


def test_lines_are_numbered_as_given():
    assert [ln.no for ln in clean_lines("a\nb", 5)] == [5, 6] and isinstance(clean_lines("a")[0], Line)
