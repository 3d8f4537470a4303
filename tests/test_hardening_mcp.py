"""The MCP server refuses hostile tool arguments with a JSON error and keeps serving
(the official SDK's client over stdio, a real subprocess)."""

from __future__ import annotations

import asyncio
import json

from mcp.shared.exceptions import MCPError

from test_mcp import _session_run

HOSTILE_CALLS = [
    ("memory_store", {"content": "a\x00b", "type": "success"}),
    ("memory_store", {"content": "x" * 100_000, "type": "success"}),
    ("memory_store", {"content": "ok", "type": "success", "tags": [""] * 3}),
    ("memory_store", {"content": "ok", "type": "success", "importance": 1e308}),
    ("memory_store", {"content": "ok", "type": "success", "scope": "everyone"}),
    ("memory_store", {"content": "ok", "type": "😀"}),
    ("memory_search", {"query": "", "limit": -5}),
    ("memory_search", {"query": "x", "types": ["nonsense"]}),
    ("memory_get_by_type", {"type": "x" * 10_000}),
    ("memory_feedback", {"memory_id": 2**70, "helpful": True}),
    ("memory_feedback", {"memory_id": -1, "helpful": False}),
    ("error_lookup", {"error": ""}),
    ("error_lookup", {"error": "\x00"}),
    ("technique_suggest", {"task_id": "t\n1"}),
    ("technique_suggest", {"task_id": ""}),
]


def test_hostile_tool_arguments_get_json_errors(tmp_path):
    async def steps(s):
        out = []
        for name, args in HOSTILE_CALLS:
            try:
                res = await s.call_tool(name, args)
            except MCPError as exc:  # refused by the SDK's own argument validation: also an answer
                out.append((name, "sdk", str(exc)))
                continue
            text = res.content[0].text if res.content else ""
            out.append((name, "tool", text, bool(res.is_error)))
        ok = await s.call_tool("memory_store", {"content": "still serving", "type": "success"})
        out.append(("after", json.loads(ok.content[0].text)))
        return out

    out = asyncio.run(_session_run(tmp_path / "h.db", steps))
    for row in out[:-1]:
        kind = row[1]
        if kind == "tool":
            text, is_error = row[2], row[3]
            if is_error:  # the SDK's argument validation: a tool error, not a crash
                assert "validation error" in text.lower() or "error" in text.lower(), row
                continue
            body = json.loads(text)
            assert isinstance(body, dict) and body.get("error") not in (None, "InternalError"), row
    assert out[-1][1]["content"] == "still serving"


def test_technique_suggest_sees_only_the_agents_own_task_ids(tmp_path):
    from harness_memory import MemoryStore

    db = tmp_path / "scoped.db"
    with MemoryStore(db) as s:  # another caller's task that happens to be named T1
        s.record_outcome("T1", "decomposition", False, error="TimeoutError: job 3 timed out")

    async def steps(s):
        res = await s.call_tool("technique_suggest", {"task_id": "T1", "error": "TimeoutError: job 4 timed out"})
        return json.loads(res.content[0].text)

    got = asyncio.run(_session_run(db, steps))
    assert got["tried"] == [] and got["technique"] != "escalate"
