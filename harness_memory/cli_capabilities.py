"""Commands of the issue-14 capabilities (tool-call log, episodes and reflection, documents,
MEMORY.md watch), registered on the ``harness-memory`` app by :func:`register`. Thin: each parses
options and calls the facade."""


from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    from .cli import DbOpt, JsonOpt, NsOpt, _emit, _open, out

    @app.command("tool-calls")
    def tool_calls(
        agent: Annotated[str | None, typer.Option("--agent", "-a", help="agent id")] = None,
        tool: Annotated[str | None, typer.Option("--tool", help="tool name")] = None,
        task: Annotated[str | None, typer.Option("--task", help="task id")] = None,
        failed: Annotated[bool | None, typer.Option("--failed/--succeeded", help="only failed / successful calls",
                                                       show_default=False)] = None,
        limit: Annotated[int, typer.Option("--limit", "-k", min=1)] = 50,
        metrics: Annotated[bool, typer.Option("--metrics", help="per-tool metrics instead of the calls")] = False,
        namespace: NsOpt = None, db: DbOpt = None, as_json: JsonOpt = False,
    ) -> None:
        """List logged tool calls (newest first), or per-tool metrics with --metrics."""
        with _open(db) as s:
            if metrics:
                rows = [m.model_dump(mode="json") for m in s.tool_metrics(namespace=namespace, agent_id=agent)]
            else:
                rows = [c.model_dump(mode="json") for c in s.tool_calls(
                    agent_id=agent, tool_name=tool, task_id=task, success=None if failed is None else not failed,
                    namespace=namespace, limit=limit)]
        if as_json:
            _emit(rows)
            return
        if not rows:
            out.print("[yellow]no tool calls[/]")
            return
        cols = (["tool_type", "tool_name", "calls", "success_rate", "p50_ms", "p95_ms", "last_failure_at"] if metrics
                else ["id", "created_at", "agent_id", "tool_name", "success", "duration_ms", "error_signature"])
        t = Table(title="tool metrics" if metrics else "tool calls")
        for c in cols:
            t.add_column(c, overflow="fold")
        for r in rows:
            t.add_row(*[escape("-" if r[c] is None else str(r[c])) for c in cols])
        out.print(t)

    @app.command("log-tool-call")
    def log_tool_call(
        tool: str,
        agent: Annotated[str, typer.Option("--agent", "-a", help="agent id")],
        ok: Annotated[bool, typer.Option("--success/--failure", help="did the call succeed")],
        tool_type: Annotated[str, typer.Option("--type", "-t", help="builtin, http, mcp, shell, ...")] = "builtin",
        params: Annotated[str | None, typer.Option("--params", help="parameters as a JSON object")] = None,
        result: Annotated[str | None, typer.Option(help="the result text (summarised when long)")] = None,
        error: Annotated[str | None, typer.Option(help="the error text of a failed call")] = None,
        duration_ms: Annotated[float | None, typer.Option("--duration-ms")] = None,
        task: Annotated[str | None, typer.Option("--task", help="task id")] = None,
        session: Annotated[str | None, typer.Option("--session", help="session id")] = None,
        namespace: NsOpt = None, db: DbOpt = None, as_json: JsonOpt = False,
    ) -> None:
        """Log one tool call (for shell harnesses)."""
        import json

        from .errors import InvalidInputError

        parameters = None
        if params is not None:
            try:
                parameters = json.loads(params)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"--params is not JSON ({exc.msg} at column {exc.colno})") from None
        with _open(db) as s:
            c = s.log_tool_call(tool, agent_id=agent, success=ok, tool_type=tool_type, parameters=parameters,
                                result=result, error=error, duration_ms=duration_ms, task_id=task, session_id=session,
                                namespace=namespace)
        if as_json:
            _emit(c.model_dump(mode="json"))
        else:
            out.print(f"[green]logged[/] tool call #{c.id} {escape(c.tool_name)} "
                      + ("ok" if c.success else f"failed {c.error_signature or ''}"))
