"""Excerpt classes met in the heldout11 split of the CI-log corpus (its first run: tests/fixtures/ci_logs/README.md,
"The `heldout11` split"), each written as a general property of failure_excerpt and tested on inputs of other tools
and words than the split's logs: two more runners' line prefixes (a bracketed source name before a slash- or
dash-dated time stamp, AWS CodeBuild's ``[Container] 2026/11/27 02:36:00.082499``; a build step's name column, Google
Cloud Build's ``Step #1 - "test": ``), the C++ runtime's report of an exception nothing caught as the statement a
shell's ``Aborted`` trails, a tool's numbered error (``curl: (60) ...``) over the explanation under it, and a Python
exception group's members read as its causes."""

from __future__ import annotations

import string

from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import clean_lines, extract

_WORDS = st.text(alphabet=string.ascii_letters + string.digits + " .,:;'\"()/_-=", min_size=1, max_size=80).filter(
    lambda s: s.strip() == s and s[:1].isalpha()
)


# -- 1. a bracketed source name before a date and time is the runner's prefix ---------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(["Container", "runner", "Agent", "build-agent", "Job 3"]),
    sep=st.sampled_from(["/", "-"]),
    frac=st.sampled_from(["", ".1", ".082499", ",123"]),
    message=_WORDS,
)
def test_a_bracketed_source_and_time_stamp_is_stripped(name, sep, frac, message):
    raw = f"[{name}] 2026{sep}11{sep}27 02:36:00{frac} {message}"
    (line,) = clean_lines(raw)
    assert line.text == message.rstrip()


def test_a_level_tag_before_a_time_stamp_stays_evidence():
    (line,) = clean_lines("[ERROR] 2026-11-27 02:36:00 could not open the spool file")
    assert line.level == "error" and line.text.endswith("could not open the spool file")
    (line,) = clean_lines("[warning] 2026/11/27 02:36:00 disk almost full")
    assert line.text.startswith("[warning]")  # a level word is never taken for a source name


def _codebuild(output: list[str], command: str = "make test") -> str:
    head = [
        "[Container] 2026/11/27 02:40:00.001 Running on CodeBuild On-demand",
        "[Container] 2026/11/27 02:40:00.002 Unable to initialize cache download: no paths specified to be cached",
        "[Container] 2026/11/27 02:40:00.003 Phase complete: DOWNLOAD_SOURCE State: SUCCEEDED",
        "[Container] 2026/11/27 02:40:00.004 Entering phase BUILD",
        f"[Container] 2026/11/27 02:40:00.005 Running command {command}",
    ]
    tail = [
        "",
        f"[Container] 2026/11/27 02:40:01.000 Command did not exit successfully {command} exit status 1",
        "[Container] 2026/11/27 02:40:01.001 Phase complete: BUILD State: FAILED",
        "[Container] 2026/11/27 02:40:01.002 Phase context status code: COMMAND_EXECUTION_ERROR Message: Error while "
        f"executing command: {command}. Reason: exit status 1",
        "[Container] 2026/11/27 02:40:01.003 Entering phase POST_BUILD",
        "[Container] 2026/11/27 02:40:01.004 Phase complete: POST_BUILD State: SUCCEEDED",
    ]
    return "\n".join(head + output + tail)


def test_a_codebuild_runner_line_is_not_the_failure():
    text = _codebuild(
        [
            "Traceback (most recent call last):",
            '  File "/src/app/load.py", line 3, in <module>',
            "    import yaml",
            "ModuleNotFoundError: No module named 'yaml'",
        ],
        "python app/load.py",
    )
    ex = extract(text)
    assert ex.message.startswith("ModuleNotFoundError") and categorize(ex) == "import_error"
    ex = extract(_codebuild(["src/queue.c:14:9: error: 'head' undeclared (first use in this function)"]))
    assert "undeclared" in ex.message and categorize(ex) == "compile_error"
    # a failure of the same class as the runner's own "Unable to ..." line: the step's command bounds the search
    ex = extract(_codebuild(["==14022==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010"]))
    assert "heap-use-after-free" in ex.message and ex.lines == (6, 6)


# -- 2. a build step's name column -----------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 99), name=st.sampled_from(["", "test", "go vet", "build-image", "npm ci"]), message=_WORDS)
def test_a_step_name_column_is_stripped(n, name, message):
    col = f'Step #{n} - "{name}": ' if name else f"Step #{n}: "
    (line,) = clean_lines(col + message)
    assert line.text == message.rstrip()


def test_a_cloud_build_step_is_read_as_its_tool_s_output():
    text = "\n".join(
        [
            "BUILD",
            'Starting Step #0 - "unit"',
            'Step #0 - "unit": Already have image (with digest): python:3.12',
            'Step #0 - "unit": Traceback (most recent call last):',
            'Step #0 - "unit":   File "/workspace/jobs/sync.py", line 9, in <module>',
            'Step #0 - "unit":     open("/workspace/exports/today.csv", "w")',
            "Step #0 - \"unit\": PermissionError: [Errno 13] Permission denied: '/workspace/exports/today.csv'",
            "ERROR",
            'ERROR: build step 0 "python:3.12" failed: step exited with non-zero status: 1',
        ]
    )
    ex = extract(text)
    assert ex.message.startswith("PermissionError") and categorize(ex) == "permission"


# -- 3. the C++ runtime's report of an uncaught exception is the statement a shell's death report trails ------------
def test_terminate_called_is_the_statement_not_the_shell_s_aborted_line():
    text = "\n".join(
        [
            "loading 3 shards",
            "terminate called after throwing an instance of 'std::runtime_error'",
            "  what():  shard 2: checksum mismatch",
            "bash: line 1:  4242 Aborted                 (core dumped) ./loader --all",
        ]
    )
    ex = extract(text)
    assert ex.message.startswith("terminate called after throwing") and ex.lines == (2, 3)
    assert "checksum mismatch" in ex.block


def test_terminate_without_an_active_exception_is_a_statement_too():
    ex = extract("worker started\nterminate called without an active exception\nAborted (core dumped)")
    assert ex.message == "terminate called without an active exception"


# -- 4. a tool's numbered error over the explanation it prints under it ---------------------------------------------
def test_a_numbered_error_line_is_the_statement_over_its_explanation():
    text = "\n".join(
        [
            "fetching https://mirror.example.org/dist/tool.tgz",
            "curl: (6) Could not resolve host: mirror.example.org",
            "",
            "curl failed to resolve the host; check the proxy settings and try again.",
        ]
    )
    ex = extract(text)
    assert ex.message.startswith("curl: (6)") and categorize(ex) == "network"
    ex = extract("uploading\nrsync-lite: (23) partial transfer due to vanished source files\nretry later")
    assert ex.message.startswith("rsync-lite: (23)")


# -- 5. an exception group's members are its causes --------------------------------------------------------------------
def _group(members: list[str]) -> str:
    out = [
        "  + Exception Group Traceback (most recent call last):",
        '  |   File "/srv/app/fanout.py", line 30, in <module>',
        "  |     asyncio.run(main())",
        f"  | ExceptionGroup: unhandled errors in a TaskGroup ({len(members)} sub-exceptions)",
    ]
    for k, m in enumerate(members, 1):
        out += [
            f"  +-+---------------- {k} ----------------" if k == 1 else f"    +---------------- {k} ----------------",
            "    | Traceback (most recent call last):",
            '    |   File "/srv/app/fanout.py", line 12, in fetch',
            "    |     data = await client.get(url)",
        ]
        for depth in range(4):  # the library frames under the application's (the member's line comes far below)
            out += [
                f'    |   File "/usr/lib/python3.12/asyncio/streams.py", line {40 + depth}, in read',
                "    |     ...",
            ]
        out += [
            f"    | {m}",
        ]
    out.append("    +------------------------------------")
    return "\n".join(out)


def test_an_exception_group_takes_its_members_category():
    ex = extract(_group(["TimeoutError: read from 10.0.0.7:9000 took longer than 5 s"] * 2))
    assert ex.message.lstrip("| ").startswith("ExceptionGroup") and categorize(ex) == "timeout"
    ex = extract(_group(["PermissionError: [Errno 13] Permission denied: '/var/spool/out'", "ValueError: bad row"]))
    assert categorize(ex) == "permission"  # the environment's cause decides, as for a Caused by chain


def test_an_exception_group_s_members_are_read_from_its_box_only():
    text = _group(["KeyError: 'region'"]) + "\nConnectionRefusedError: [Errno 111] printed by a later step"
    ex = extract(text)
    assert all("printed by a later step" not in c for c in ex.causes)
