"""The Claude Code hook's tool-call log as a user reads it back (issue 18): a failed call of any tool is
logged as a failure with its error, a successful one as a success. The hook runs in this process (its
``main``, as the command line calls it) with a budget no machine load reaches, so the test checks what
is logged, not how fast."""

from __future__ import annotations

import io
import json

from harness_memory import MemoryStore
from harness_memory.adapters.claude_code import main, project_namespace

SESSION = "0b6c8a52-3f5e-4d1a-8c0e-7d2b9e4f1a63"


def event(project, name: str, **fields) -> dict:
    return {"session_id": SESSION, "cwd": str(project), "hook_event_name": name, **fields}


def hook(db, payload) -> dict:
    out, err = io.StringIO(), io.StringIO()
    rc = main(
        db=db,
        stdin=io.BytesIO(json.dumps(payload).encode()),
        stdout=out,
        stderr=err,
        hard_exit=False,
        budget_ms=600_000,
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
