"""The Claude Code hook as a user reads it back (issue 18): a failed call of any tool is logged as a failure
with its error, a successful one as a success; advice longer than the budget is cut at a line within it; a
project's namespace is its folder's name and a hash of its path; main() returns to a Python caller unless
it abandons a slow call; the installed command is the one it was installed with, options kept. The hook runs in this process (its
``main``, as the command line calls it) with a budget no machine load reaches, so the test checks what
is logged, not how fast."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

from harness_memory import MemoryStore
from harness_memory.adapters.claude_code import main, project_namespace

SESSION = "0b6c8a52-3f5e-4d1a-8c0e-7d2b9e4f1a63"


def event(project, name: str, **fields) -> dict:
    return {"session_id": SESSION, "cwd": str(project), "hook_event_name": name, **fields}


def hook(db, payload, **options) -> dict:
    out, err = io.StringIO(), io.StringIO()
    rc = main(
        db=db,
        stdin=io.BytesIO(json.dumps(payload).encode()),
        stdout=out,
        stderr=err,
        hard_exit=False,
        budget_ms=600_000,
        **options,
    )
    assert rc == 0 and err.getvalue() == "", err.getvalue()
    return json.loads(out.getvalue())


def test_each_tool_call_is_logged_with_its_outcome(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    db = tmp_path / "m.db"
    calls = [
        event(project, "PostToolUse", tool_name="Read", tool_input={"file_path": "a.py"}, tool_use_id="t1"),
        event(
            project,
            "PostToolUseFailure",
            tool_name="Edit",
            tool_input={"file_path": "a.py", "old_string": "x", "new_string": "y"},
            tool_use_id="t2",
            error="String to replace not found in file.",
        ),
        event(project, "PostToolUseFailure", tool_name="mcp__github__get_issue", tool_input={"n": 1}, tool_use_id="t3"),
        event(
            project,
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool_use_id="t4",
            tool_response={"stdout": "a.py\n", "stderr": "", "interrupted": False},
        ),
    ]
    for payload in calls:
        assert isinstance(hook(db, payload), dict)
    with MemoryStore(db) as s:
        got = [
            (c.tool_name, c.success, c.error)
            for c in reversed(s.tool_calls(namespace=project_namespace({"cwd": str(project)})))
        ]
    assert got == [
        ("Read", True, None),
        ("Edit", False, "String to replace not found in file."),
        ("mcp__github__get_issue", False, "tool call failed"),  # a failure without a message still failed
        ("Bash", True, None),
    ]


# a compile failure of forty lines: its advice (the quoting preamble, the signature, the next technique)
# runs to 400 characters and more
COMPILE_ERROR = "Exit code 2\n" + "".join(
    f"src/mod{i}.c:{i}:1: error: unknown type name 'size_{i}'\n" for i in range(40)
)


def test_advice_longer_than_the_budget_is_cut_at_a_line_within_the_budget(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    failure = event(
        project, "PostToolUseFailure", tool_name="Bash", tool_input={"command": "make"}, error=COMPILE_ERROR
    )
    answers = {  # each budget in a fresh database: the same first-seen advice, cut or not
        budget: hook(tmp_path / f"m{budget}.db", failure, budget_chars=budget)["hookSpecificOutput"][
            "additionalContext"
        ]
        for budget in (6000, 300, 350)
    }
    full = answers.pop(6000)
    assert len(full) >= 400 and not full.endswith("[advice truncated]")
    for budget, text in answers.items():
        assert len(text) <= budget and text.endswith("\n[advice truncated]")
        kept = text.removesuffix("\n[advice truncated]")
        assert kept.startswith("The blocks below are records") and full.startswith(kept + "\n")  # whole lines


def test_a_projects_namespace_is_its_folders_name_and_a_hash_of_its_path(monkeypatch):
    # stable across versions: a project's memories stay in the namespace they were written to
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    folder = "/srv/My Project (v2)"
    digest = hashlib.sha256(folder.encode()).hexdigest()[:10]
    assert project_namespace({"cwd": folder}) == f"My-Project--v2--{digest}"
    assert project_namespace({"cwd": "/srv/app_1.2-rc"}).startswith("app_1.2-rc-")


# a Python program that calls the hook's main() itself and then goes on working
_CALLER = """
import io, json, sys, time
from harness_memory.adapters.claude_code import main
db, project, budget = sys.argv[1], sys.argv[2], int(sys.argv[3])
payload = {"session_id": "s", "cwd": project, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
           "tool_input": {"command": "make"}, "tool_use_id": "t1", "error": "make: *** [all] Error 2"}
rc = main(db=db, stdin=io.BytesIO(json.dumps(payload).encode()), stdout=sys.stdout, stderr=io.StringIO(), budget_ms=budget)
print("returned", rc, flush=True)
time.sleep(float(sys.argv[4]))
"""


def test_main_returns_to_its_caller_and_ends_the_process_only_when_it_abandons_a_slow_call(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    db = tmp_path / "m.db"
    done = subprocess.run(
        [sys.executable, "-c", _CALLER, str(db), str(project), "600000", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "returned 0", done.stderr
    with MemoryStore(db) as s:
        stored = s.stats()["memories"]
    assert stored >= 1
    lock = sqlite3.connect(db, isolation_level=None, timeout=1)
    lock.execute("BEGIN IMMEDIATE")  # another process holds the write lock: the call cannot finish in time
    caller = subprocess.Popen(
        [sys.executable, "-c", _CALLER, str(db), str(project), "700", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert caller.stdout is not None
        assert caller.stdout.readline().strip() == "{}"  # answered empty within the budget
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    out, _err = caller.communicate(timeout=120)
    # the abandoned call ended the process (its write with it): it never returned, and nothing it
    # was still waiting to write lands once the lock is free
    assert caller.returncode == 0 and "returned" not in out
    with MemoryStore(db) as s:
        assert s.stats()["memories"] == stored


def test_the_installed_hook_command_is_the_command_it_was_installed_with_and_keeps_its_options(tmp_path):
    # installed through the `harness-memory` command, the hook runs that command (not whichever python is on
    # the PATH when Claude Code runs it), with the database, agent and namespace it was installed with
    script = Path(sys.executable).with_name("harness-memory")
    project = tmp_path / "proj"
    project.mkdir()
    db = tmp_path / "m.db"
    env = {**os.environ, "HARNESS_MEMORY_CLI_SERVER": "0"}
    r = subprocess.run(
        [str(script), "hook", "claude-code", "--install", "--project", str(project), "--db", str(db)]
        + ["--agent", "reviewer", "--namespace", "team-a"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    entries = [h for groups in hooks.values() for g in groups for h in g["hooks"]]
    (command,) = {h["command"] for h in entries}
    # each a command hook in Claude Code's format, with the default timeout
    assert all(h == {"type": "command", "command": command, "timeout": 10} for h in entries)
    assert shlex.split(command) == [
        str(script.resolve()),
        *("hook", "claude-code", "--db", str(db.resolve()), "--agent", "reviewer", "--namespace", "team-a"),
    ]
