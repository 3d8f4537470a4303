"""`harness-memory run` in-process (issue 18): ``run_command`` on real commands and a real SQLite store,
its streams read back — what is recorded and under which agent and tag, the advice's marker lines, a
silent failure, a long command line, one note for a database that cannot be opened, the environment
a retry sees, and the kept output's bounds (docs/adapters.md)."""

from __future__ import annotations

import io
import sys
import tracemalloc

import pytest

from harness_memory import MemoryStore
from harness_memory.adapters.run import BoundedLog, RunOptions, run_command
from harness_memory.testing import FakeEmbedder

MARK = "[harness-memory]"
FAIL = [
    sys.executable,
    "-c",
    "import sys; print('ERROR: cannot reach registry.local:5000', file=sys.stderr); sys.exit(3)",
]


@pytest.fixture
def s(tmp_path):
    with MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(16)) as st:
        yield st


def run(opts: RunOptions, **kw):
    out, err = io.BytesIO(), io.BytesIO()
    report = run_command(opts, stdout=out, stderr=err, **kw)
    return report, out.getvalue(), err.getvalue().decode()


def marked(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith(MARK + " ")]


def recorded(s: MemoryStore, task_id: str, agent_id: str = "ci"):
    rows = s.get_by_type("failure", agent_id=agent_id) + s.get_by_type("success", agent_id=agent_id)
    return [m for m in rows if m.task_id == task_id]


def test_a_failure_is_recorded_under_agent_ci_tagged_as_a_run_and_advised_between_marker_lines(s):
    report, out, err = run(RunOptions(task_id="t1", command=FAIL), store=s)
    assert report.exit_code == 3 and report.memory_ok and len(report.attempts) == 1
    (m,) = recorded(s, "t1")  # the default agent is "ci"
    assert m.type == "failure" and "harness-memory-run" in m.tags
    lines = marked(err)
    assert lines[0] == f"{MARK} ---- attempt 1 failed (exit 3) ----" and lines[-1] == f"{MARK} ----"
    assert f"{MARK} seen before: no" in lines
    assert report.attempts[0].signature is not None and report.attempts[0].signature in lines[1]
    _, _, again = run(RunOptions(task_id="t2", command=FAIL), store=s)
    assert f"{MARK} seen before: yes" in marked(again)


def test_a_command_that_fails_silently_is_recorded_with_its_status(s):
    report, out, err = run(RunOptions(task_id="quiet", command=[sys.executable, "-c", "raise SystemExit(7)"]), store=s)
    assert report.exit_code == 7 and report.memory_ok and out == b""
    assert [m.type for m in recorded(s, "quiet")] == ["failure"]
    signature = [ln for ln in marked(err) if ln.startswith(f"{MARK} signature ")]
    assert len(signature) == 1 and "command exited with status" in signature[0]  # what it is signed by


def test_a_command_line_longer_than_a_title_is_still_recorded(s):
    arg = "x" * 3000
    report, _, err = run(RunOptions(task_id="long", command=[sys.executable, "-c", "pass", arg]), store=s)
    assert report.exit_code == 0 and report.memory_ok, err
    assert [m.type for m in recorded(s, "long")] == ["success"]


def test_a_database_that_cannot_be_opened_costs_one_bounded_note_and_not_the_exit_status(tmp_path):
    bad = tmp_path / ("d" * 150) / ("e" * 150) / "not-a-db"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"this is not sqlite" * 100)
    report, out, err = run(RunOptions(task_id="t", command=FAIL, retries=2), db=bad)
    assert report.exit_code == 3 and not report.memory_ok
    notes = [ln for ln in marked(err) if "memory unavailable" in ln]
    assert len(notes) == 1  # the database is tried once, not at every write of every attempt
    detail = notes[0].split("memory unavailable (", 1)[1].rsplit("); this run is not recorded", 1)[0]
    kind, message = detail.split(": ", 1)
    assert kind == "DatabaseOpenError" and len(message) == 300  # a long message is cut to 300 characters
    assert bad.read_bytes() == b"this is not sqlite" * 100


RETRY = """
import os, sys
if os.environ.get("HARNESS_MEMORY_TECHNIQUE"):
    advice = open(os.environ["HARNESS_MEMORY_ADVICE_FILE"]).read()
    print(os.environ["HARNESS_MEMORY_ATTEMPT"], os.environ["HARNESS_MEMORY_TECHNIQUE"], "signature" in advice.lower())
    sys.exit(0)
print("ERROR: connection refused to registry.local:5000", file=sys.stderr)
sys.exit(4)
"""


def test_a_retry_sees_the_technique_and_reads_the_advice_file(s):
    report, out, err = run(RunOptions(task_id="r", command=[sys.executable, "-c", RETRY], retries=1), store=s)
    assert report.exit_code == 0, err
    attempt, technique, has_signature = out.decode().split()
    assert (attempt, has_signature) == ("2", "True") and technique == report.attempts[1].technique
    assert f"{MARK} attempt 2 passed with technique {technique}" in marked(err)


def test_a_file_that_is_not_executable_exits_126_like_a_shell(s, tmp_path):
    script = tmp_path / "deploy.sh"
    script.write_text("echo never\n")
    report, out, err = run(RunOptions(task_id="perm", command=[str(script)]), store=s)
    assert report.exit_code == 126 and out == b""
    assert f"{script}: permission denied" in err


def test_output_of_exactly_the_limit_is_kept_whole_and_beyond_it_the_cut_is_counted():
    log = BoundedLog(4096)
    whole = b"".join(f"line {i:04d}\n".encode() for i in range(410))[:4096]
    log.add(whole)
    assert log.data() == whole
    log.add(b"Z")  # one byte over: the middle is cut, and every byte is accounted for
    text = log.text()
    head, rest = text.split("\n[... ", 1)
    omitted, tail = rest.split(" bytes left out by harness-memory ...]\n", 1)
    assert len(head) + int(omitted) + len(tail) == 4097
    assert tail.endswith("Z") and whole.decode().startswith(head)


def test_the_kept_output_stays_bounded_however_much_the_command_prints():
    log = BoundedLog(64 * 1024)
    chunk = b"progress line that repeats\n" * 2000  # 54 kB
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(400):  # 21 MB in all
            log.add(b"%06d " % i + chunk)  # a new object each time, as a pipe read gives
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert held < 1 << 20  # about the limit and one chunk, not what went through
    assert log.text().endswith("progress line that repeats\n")
