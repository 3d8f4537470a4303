"""The learning half on the command line: ``select-technique``, ``outcome``, ``apply`` and
``has-seen`` (``signature`` and ``remember --metadata`` live in cli.py). Registered on the
``harness-memory`` app by :func:`register`. Thin: each parses options and calls the facade."""

from typing import Annotated

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    from .cli import (
        DbOpt,
        JsonOpt,
        NsOpt,
        _emit,
        _open_creating,
        _open_existing,
        _read_log,
        out,
    )

    AgentOpt = Annotated[
        str | None, typer.Option("--agent", "-a", help="agent id: whose memories and ledger entries (default: none)")
    ]

    def _error_text(error: str | None, error_file: str | None) -> str | None:
        from .errors import InvalidInputError

        if error is not None and error_file is not None:
            raise InvalidInputError("give --error or --error-file, not both")
        return _read_log(error_file) if error_file is not None else error

    ErrOpt = Annotated[str | None, typer.Option("--error", "-e", help="the error text")]
    ErrFileOpt = Annotated[
        str | None,
        typer.Option(
            "--error-file", help="read the error (a message, a traceback, a whole log) from this file (- for stdin)"
        ),
    ]

    @app.command("select-technique")
    def select_technique(
        task_id: Annotated[str, typer.Argument(help="the failing task's id")],
        error: ErrOpt = None,
        error_file: ErrFileOpt = None,
        agent_type: Annotated[str | None, typer.Option(help="the agent's type (a ledger level)")] = None,
        category: Annotated[str | None, typer.Option(help="the task's category (a ledger level)")] = None,
        technique: Annotated[
            list[str] | None,
            typer.Option("--technique", help="a technique to choose from (repeatable; default: the settings' ladder)"),
        ] = None,
        seed: Annotated[int | None, typer.Option(help="seed of the exploration draw")] = None,
        db: DbOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Choose the next retry technique for a failing task from the ledger (never one it tried)."""
        text = _error_text(error, error_file)
        with _open_existing(db) as s:
            d = s.select_technique(
                task_id, text, agent_type=agent_type, task_category=category, techniques=technique or None, seed=seed
            )
        if as_json:
            _emit(d.model_dump(mode="json"))
            return
        out.print(f"{d.technique}" + (" (escalate)" if d.escalate else ""))
        out.print(f"  {d.reason}")

    @app.command()
    def outcome(
        task_id: Annotated[str, typer.Argument(help="the task's id")],
        technique: Annotated[str, typer.Argument(help="the technique the attempt used")],
        success: Annotated[bool, typer.Option("--success/--failure", help="whether the attempt worked")],
        error: ErrOpt = None,
        error_file: ErrFileOpt = None,
        agent: AgentOpt = None,
        notes: Annotated[str | None, typer.Option(help="what was done")] = None,
        agent_type: Annotated[str | None, typer.Option()] = None,
        category: Annotated[str | None, typer.Option()] = None,
        namespace: NsOpt = None,
        db: DbOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Record the outcome of one attempt in the technique ledger (creates the database if needed)."""
        text = _error_text(error, error_file)
        with _open_creating(db) as s:
            a = s.record_outcome(
                task_id,
                technique,
                success,
                error=text,
                agent_id=agent,
                notes=notes,
                agent_type=agent_type,
                task_category=category,
                namespace=namespace,
            )
        if as_json:
            _emit(a.model_dump(mode="json"))
            return
        out.print(f"recorded {task_id}: {technique} -> {a.result}")

    @app.command("apply")
    def apply_(
        memory_id: Annotated[int, typer.Argument(help="the memory that was applied")],
        helpful: Annotated[bool, typer.Option("--helpful/--unhelpful", help="whether it helped")],
        agent: AgentOpt = None,
        outcome_text: Annotated[str | None, typer.Option("--outcome", help="what happened")] = None,
        task_id: Annotated[str | None, typer.Option("--task", help="the task it was applied to")] = None,
        error: ErrOpt = None,
        error_file: ErrFileOpt = None,
        db: DbOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Credit a memory: it was applied to a task, and it helped or not (ranks recall and fixes)."""
        text = _error_text(error, error_file)
        with _open_existing(db) as s:
            m = s.apply(memory_id, helpful=helpful, outcome=outcome_text, agent_id=agent, task_id=task_id, error=text)
        if as_json:
            _emit(m.model_dump(mode="json"))
            return
        out.print(
            f"#{m.id}: applied {m.times_applied} time{'s' if m.times_applied != 1 else ''}, "
            f"{m.times_successful} helpful"
        )

    @app.command("has-seen")
    def has_seen(
        agent: Annotated[str, typer.Option("--agent", "-a", help="agent id: its own memories and global ones")],
        error: ErrOpt = None,
        error_file: ErrFileOpt = None,
        namespace: NsOpt = None,
        db: DbOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Whether a memory the agent may see carries this error (exit 0: seen, 1: not seen)."""
        from .errors import InvalidInputError

        text = _error_text(error, error_file)
        if text is None:
            raise InvalidInputError("give the error with --error or --error-file")
        with _open_existing(db) as s:
            seen = s.has_seen_error(agent, text, namespace=namespace)
            sig = s.error_signature(text)
        if as_json:
            _emit({"seen": seen, "signature": sig.id, "category": sig.category})
        else:
            out.print(f"{'seen' if seen else 'not seen'}: {sig.id} ({sig.category})")
        raise typer.Exit(0 if seen else 1)
