"""Commands of the issue-14 capabilities (tool-call log, episodes and reflection, documents,
MEMORY.md watch), registered on the ``harness-memory`` app by :func:`register`. Thin: each parses
options and calls the facade."""

from typing import Annotated

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    from .cli import DbOpt, JsonOpt, NsOpt, Table, _emit, _open_creating, _open_existing, escape, out

    @app.command("tool-calls")
    def tool_calls(
        agent: Annotated[str | None, typer.Option("--agent", "-a", help="agent id")] = None,
        tool: Annotated[str | None, typer.Option("--tool", help="tool name")] = None,
        task: Annotated[str | None, typer.Option("--task", help="task id")] = None,
        failed: Annotated[
            bool | None, typer.Option("--failed/--succeeded", help="only failed / successful calls", show_default=False)
        ] = None,
        limit: Annotated[int, typer.Option("--limit", "-k", min=1)] = 50,
        metrics: Annotated[bool, typer.Option("--metrics", help="per-tool metrics instead of the calls")] = False,
        namespace: NsOpt = None,
        db: DbOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """List logged tool calls (newest first), or per-tool metrics with --metrics."""
        with _open_existing(db) as s:
            if metrics:
                rows = [m.model_dump(mode="json") for m in s.tool_metrics(namespace=namespace, agent_id=agent)]
            else:
                rows = [
                    c.model_dump(mode="json")
                    for c in s.tool_calls(
                        agent_id=agent,
                        tool_name=tool,
                        task_id=task,
                        success=None if failed is None else not failed,
                        namespace=namespace,
                        limit=limit,
                    )
                ]
        if as_json:
            _emit(rows)
            return
        if not rows:
            out.print("[yellow]no tool calls[/]")
            return
        cols = (
            ["tool_type", "tool_name", "calls", "success_rate", "p50_ms", "p95_ms", "last_failure_at"]
            if metrics
            else ["id", "created_at", "agent_id", "tool_name", "success", "duration_ms", "error_signature"]
        )
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
        namespace: NsOpt = None,
        db: DbOpt = None,
        as_json: JsonOpt = False,
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
        with _open_creating(db) as s:
            c = s.log_tool_call(
                tool,
                agent_id=agent,
                success=ok,
                tool_type=tool_type,
                parameters=parameters,
                result=result,
                error=error,
                duration_ms=duration_ms,
                task_id=task,
                session_id=session,
                namespace=namespace,
            )
        if as_json:
            _emit(c.model_dump(mode="json"))
        else:
            out.print(
                f"[green]logged[/] tool call #{c.id} {escape(c.tool_name)} "
                + ("ok" if c.success else f"failed {c.error_signature or ''}")
            )

    @app.command("add-doc")
    def add_doc(
        paths: Annotated[list[str], typer.Argument(help="files, folders (recursively) or glob patterns (** works)")],
        agent: Annotated[str | None, typer.Option("--agent", "-a", help="owner (default: documents)")] = None,
        scope: Annotated[str, typer.Option(help="global or agent")] = "global",
        tag: Annotated[list[str] | None, typer.Option("--tag", help="tag (repeatable)")] = None,
        namespace: NsOpt = None,
        db: DbOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Index documents for recall (markdown, code and text files), re-indexing only changed chunks."""
        import glob
        from pathlib import Path

        from rich.progress import BarColumn, Progress, TextColumn

        from .documents import CODE_SUFFIXES, MARKDOWN_SUFFIXES
        from .errors import HarnessMemoryError, InvalidInputError

        wanted = (
            CODE_SUFFIXES
            | MARKDOWN_SUFFIXES
            | {".txt", ".text", ".rst", ".adoc", ".csv", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg"}
        )
        files: list[Path] = []
        for p in paths:
            found = (
                [Path(x) for x in sorted(glob.glob(p, recursive=True))] if any(ch in p for ch in "*?[") else [Path(p)]
            )
            for f in found:
                if f.is_dir():
                    files += sorted(
                        x
                        for x in f.rglob("*")
                        if x.is_file()
                        and x.suffix.lower() in wanted
                        and not any(part.startswith(".") for part in x.relative_to(f).parts)
                    )
                elif f.is_file():
                    files.append(f)
        files = list(dict.fromkeys(files))
        if not files:
            raise InvalidInputError("no files to add: " + ", ".join(paths)[:300])
        done, failed = [], []
        added = 0
        with (
            _open_creating(db) as s,
            Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                disable=as_json,
            ) as prog,
        ):
            task = prog.add_task("indexing", total=len(files))
            for f in files:
                prog.update(task, description=escape(f.name[:40]))
                try:
                    rep = s.add_document(f, agent_id=agent, scope=scope, tags=tag or (), namespace=namespace)
                    done.append(
                        {
                            "id": rep.document.id,
                            "source": rep.document.source,
                            "chunks": rep.document.chunks,
                            "added": rep.added,
                            "unchanged": rep.unchanged,
                            "removed": rep.removed,
                            "skipped": rep.skipped,
                        }
                    )
                    added += rep.added
                except (HarnessMemoryError, OSError) as exc:  # one bad file does not stop the others
                    failed.append({"path": str(f), "error": f"{type(exc).__name__}: {exc}"[:300]})
                prog.advance(task)
        if as_json:
            _emit({"documents": done, "failed": failed, "chunks_added": added})
        else:
            out.print(
                f"[green]indexed[/] {len(done)} document(s), {added} new chunk(s)"
                + (f"; [red]{len(failed)} failed[/]" if failed else "")
            )
            for failure in failed:
                out.print(f"  {escape(failure['path'])}: {escape(failure['error'])}")
        if failed and not done:
            raise SystemExit(2)

    @app.command("watch")
    def watch(
        directory: Annotated[
            str, typer.Option("--dir", help="the folder of DIR/<agent_id>/MEMORY.md files")
        ] = "agents",
        debounce: Annotated[float | None, typer.Option(help="seconds a file must be quiet (default: settings)")] = None,
        poll: Annotated[bool, typer.Option("--poll", help="poll the folder instead of file-system events")] = False,
        write_back: Annotated[
            bool | None,
            typer.Option(
                "--write-back/--no-write-back",
                help="write memories changed through the API back to the files",
                show_default=False,
            ),
        ] = None,
        namespace: NsOpt = None,
        db: DbOpt = None,
    ) -> None:
        """Watch each agent's MEMORY.md and re-import it on change, until SIGINT or SIGTERM."""
        import signal
        import threading

        from .cli import err

        stop = threading.Event()

        def report(ev) -> None:
            what = {
                "imported": "imported",
                "skipped": "unchanged",
                "removed": "removed (memories kept)",
                "exported": "written back",
                "error": "not imported",
            }.get(ev.kind, ev.kind)
            detail = ev.detail.get("error") or ", ".join(f"{k} {n}" for k, n in ev.detail.items())
            err.print(f"{escape(ev.path)}: {what}" + (f" ({escape(str(detail))})" if detail else ""), highlight=False)

        def on_signal(signum, frame):
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        with _open_creating(db) as s:
            w = s.watch(
                directory,
                namespace=namespace,
                debounce=debounce,
                poll=True if poll else None,
                write_back=write_back,
                on_event=report,
            )
            err.print(
                f"watching {escape(str(w.directory))} ({'polling' if w.poll else 'file-system events'}, "
                f"debounce {w.debounce:g} s{', write-back' if w.write_back else ''}); Ctrl-C stops",
                highlight=False,
            )
            while not stop.wait(0.5):
                if not w.running:
                    raise SystemExit(1)
        err.print("watch stopped", highlight=False)

    @app.command("reflect")
    def reflect(
        thread: Annotated[str | None, typer.Option("--thread", help="one thread (default: every thread)")] = None,
        agent: Annotated[str | None, typer.Option("--agent", "-a", help="one agent's episodes")] = None,
        offline: Annotated[
            bool, typer.Option("--offline", help="extractive even when a summariser is configured")
        ] = False,
        namespace: NsOpt = None,
        db: DbOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Turn unreflected episodes into durable facts and patterns (docs/episodes.md)."""
        from .jobs.reflect import summariser_from_settings

        with _open_existing(db) as s:
            summ = None if offline else summariser_from_settings(s.settings)
            made = s.reflect(thread_id=thread, agent_id=agent, namespace=namespace, summariser=summ)
        if as_json:
            _emit([m.model_dump(mode="json") for m in made])
            return
        out.print(f"[green]reflected[/] into {len(made)} memories" if made else "[yellow]nothing to reflect[/]")
        for m in made:
            out.print(f"  #{m.id} {m.type}: {escape(m.content[:150])}")
