"""The adapters' commands on the ``harness-memory`` command line: ``run`` and ``hook claude-code``.

``register(app)`` is the one call ``harness_memory.cli`` makes; everything heavy is imported
inside the commands.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]

_DB_HELP = "database file or URL (default: $HARNESS_MEMORY_DB, then ~/.local/share/harness-memory/memory.db)"


def run(
    ctx: typer.Context,
    task: Annotated[
        str,
        typer.Option(
            "--task", help='task id: one per run of a job, e.g. "$CI_JOB_NAME-$CI_PIPELINE_ID" (docs/adapters.md)'
        ),
    ],
    agent: Annotated[str, typer.Option("--agent", "-a", help="agent id")] = "ci",
    title: Annotated[str | None, typer.Option(help="task title (default: the command line)")] = None,
    retries: Annotated[
        int, typer.Option(help="re-run a failing command up to N times with the next technique", min=0, max=20)
    ] = 0,
    baseline_log: Annotated[Path | None, typer.Option(help="log of the last passing run of the same job")] = None,
    technique: Annotated[
        list[str] | None,
        typer.Option("--technique", help="the techniques to choose from (repeatable; default: settings)"),
    ] = None,
    keep_bytes: Annotated[
        int,
        typer.Option(
            help="output kept for signing: the whole up to this size, beyond it the head and the tail", min=1024
        ),
    ] = 4 << 20,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="namespace (default: settings)")] = None,
    db: Annotated[str | None, typer.Option("--db", help=_DB_HELP)] = None,
) -> None:
    """Run COMMAND (after --) as a learning task: output streamed through, failures signed and
    advised on stderr, the command's exit status kept."""
    from .run import RunOptions, run_command

    report = run_command(
        RunOptions(
            task_id=task,
            command=list(ctx.args),
            agent_id=agent,
            title=title,
            namespace=namespace,
            retries=retries,
            baseline_log=None if baseline_log is None else str(baseline_log),
            keep_bytes=keep_bytes,
            techniques=technique,
        ),
        db=db,
    )
    sys.stdout.flush()
    raise SystemExit(report.exit_code)


hook_app = typer.Typer(help="Coding-agent hooks: answer an agent's hook events from the memory.", no_args_is_help=True)


@hook_app.command("claude-code")
def claude_code(
    install: Annotated[
        bool,
        typer.Option(
            "--install", help="write the hook configuration into the project's .claude/settings.json (merged) and exit"
        ),
    ] = False,
    project: Annotated[Path | None, typer.Option(help="project folder for --install (default: .)")] = None,
    all_tools: Annotated[
        bool,
        typer.Option("--all-tools", help="with --install: hook every tool's calls (the tool-call log), not only Bash"),
    ] = False,
    agent: Annotated[str, typer.Option("--agent", "-a", help="agent id")] = "claude-code",
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="namespace (default: one per project folder)")
    ] = None,
    budget_ms: Annotated[
        int, typer.Option(help="answer within this time, empty if need be", min=50, max=60_000)
    ] = 2000,
    budget_chars: Annotated[int, typer.Option(help="size budget of injected context", min=200, max=9_500)] = 6000,
    db: Annotated[str | None, typer.Option("--db", help=_DB_HELP)] = None,
) -> None:
    """Read one Claude Code hook event (JSON on stdin), answer on stdout; never blocks the agent."""
    if install:
        from .claude_code import install as do_install

        changes = do_install(project or Path("."), db=db, agent=agent, namespace=namespace, all_tools=all_tools)
        for line in changes:
            typer.echo(line)
        return
    from .claude_code import main as hook_main

    raise SystemExit(hook_main(db=db, agent=agent, namespace=namespace, budget_ms=budget_ms, budget_chars=budget_chars))


def register(app: typer.Typer) -> None:
    app.command(
        "run",
        options_metavar="[OPTIONS] -- COMMAND [ARGS]...",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False},
    )(run)
    app.add_typer(hook_app, name="hook")
