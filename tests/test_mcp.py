"""The MCP server, driven through the official SDK's own client over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from harness_memory import MemoryStore


async def _session_run(db, steps):
    MemoryStore(db).close()  # `harness-memory mcp` serves an existing database (init first)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "harness_memory", "mcp", "--db", str(db)],
        env={**os.environ, "HARNESS_MEMORY_MCP_AGENT_ID": "agent-x", "HARNESS_MEMORY_EXTRA_TYPES": "discovery,deadend"},
    )
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await steps(session)


def _text(result) -> object:
    return json.loads(result.content[0].text)


def test_mcp_tools_over_stdio(db):  # both backends: `harness-memory mcp --db PATH-or-URL`

    async def steps(s):
        tools = (await s.list_tools()).tools
        out = {"tools": {t.name: t for t in tools}}
        out["stored"] = _text(
            await s.call_tool(
                "memory_store",
                {
                    "content": "webhook tests are flaky: use a fake clock",
                    "type": "success",
                    "scope": "global",
                    "tags": ["tests"],
                    "error": "AssertionError: expected 3 deliveries, got 2",
                },
            )
        )
        await s.call_tool("memory_store", {"content": "the API paginates with cursors", "type": "discovery"})
        out["search"] = _text(await s.call_tool("memory_search", {"query": "flaky webhook tests"}))
        out["by_type"] = _text(await s.call_tool("memory_get_by_type", {"type": "discovery"}))
        out["feedback"] = _text(
            await s.call_tool("memory_feedback", {"memory_id": out["stored"]["id"], "helpful": True})
        )
        out["lookup"] = _text(
            await s.call_tool("error_lookup", {"error": "AssertionError: expected 5 deliveries, got 4"})
        )
        out["suggest"] = _text(await s.call_tool("technique_suggest", {"task_id": "T1", "error": "TimeoutError: 30s"}))
        bad = await s.call_tool("memory_store", {"content": "", "type": "success"})
        bad_type = await s.call_tool("memory_get_by_type", {"type": "nonsense"})
        out["bad"], out["bad_type"] = _text(bad), _text(bad_type)
        out["flags"] = (bad.is_error, bad_type.is_error, (await s.call_tool("memory_search", {"query": "x"})).is_error)
        return out

    out = asyncio.run(_session_run(db, steps))
    tools = out["tools"]
    assert set(tools) == {
        "memory_store",
        "memory_search",
        "memory_get_by_type",
        "memory_feedback",
        "error_lookup",
        "technique_suggest",
    }
    for t in tools.values():
        assert len(t.description) > 60  # tells the agent when to use it
        assert "agent_id" not in json.dumps(t.input_schema)  # identity is not the caller's to choose
    assert out["stored"]["agent_id"] == "agent-x"
    assert out["search"][0]["content"].startswith("webhook tests")
    assert out["by_type"][0]["content"] == "the API paginates with cursors"
    assert out["feedback"]["times_applied"] == 1
    assert out["lookup"]["seen_before"] is True and out["lookup"]["category"] == "assertion"
    assert out["lookup"]["fixes"] == ["webhook tests are flaky: use a fake clock"]
    assert out["suggest"]["technique"] == "prompt_restructure" and not out["suggest"]["escalate"]
    assert out["bad"]["error"] == "InvalidInputError" and out["bad_type"]["error"] == "UnknownMemoryTypeError"
    assert out["flags"] == (True, True, False)  # a failed call says so (isError), a good one does not
    with MemoryStore(db) as store:
        assert {m.agent_id for m in store.get_by_type("success")} == {"agent-x"}


def test_mcp_error_lookup_offers_no_fix_for_an_error_never_seen(tmp_path):
    db = tmp_path / "quiet.db"
    with MemoryStore(db) as store:
        store.learn_fix(
            "ProxyError: Cannot connect to proxy 10.0.0.1:3128",
            "set HTTPS_PROXY before pip install",
            agent_id="agent-x",
        )
        store.remember(
            "pip install fails behind the proxy",
            type="failure",
            agent_id="agent-x",
            error="ProxyError: Cannot connect to proxy 10.0.0.1:3128",
        )

    async def steps(s):
        never = _text(await s.call_tool("error_lookup", {"error": "ModuleNotFoundError: No module named 'zstandard'"}))
        known = _text(await s.call_tool("error_lookup", {"error": "ProxyError: Cannot connect to proxy 10.9.9.9:8080"}))
        return never, known

    never, known = asyncio.run(_session_run(db, steps))
    assert never["seen_before"] is False and never["fixes"] == [] and never["failures"] == []
    assert known["seen_before"] is True and known["fixes"] == ["set HTTPS_PROXY before pip install"]
    assert known["failures"] == ["pip install fails behind the proxy"]
