"""The ``harness-memory`` command. Thin: each command parses options and calls the facade."""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC
from pathlib import Path
from typing import Annotated, Any

import typer

from .errors import HarnessMemoryError

# plain help (no console markup: "[api]" stays in the text), -h as --help
app = typer.Typer(
    help="harness-memory: the learning memory of a task harness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class _LazyConsole:
    """A rich Console made on first use: a command that prints nothing does not import rich."""

    def __init__(self, **kw: Any):
        self._kw = kw
        self._console: Any = None

    def real(self) -> Any:
        """The Console itself (for rich objects that need one, e.g. a progress bar)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kw)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


out: Any = _LazyConsole()
err: Any = _LazyConsole(stderr=True, soft_wrap=True)  # messages name paths: never wrapped mid-path


_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape(text: str) -> str:
    """``text`` fit for the terminal: rich's markup escaped, and control characters (an ESC sequence an agent or a
    global memory put in its content would move the cursor, recolour or retitle a human's terminal) shown as
    ``\\x1b``, never sent as such."""
    from rich.markup import escape as _escape

    if _CONTROL_CHARS.search(text):
        text = _CONTROL_CHARS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return _escape(text)


def Table(*a: Any, **kw: Any):
    from rich.table import Table as _Table

    return _Table(*a, **kw)


def _progress(label: str, *, disable: bool):
    """A progress bar with done/total (the total is set by the first progress callback)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err.real(), disable=disable
    )


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 memory``, ``2 memories``."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="database: a file, sqlite:///path or postgresql://user@host/db (default: $HARNESS_MEMORY_DB, then ~/.local/share/harness-memory/memory.db)",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable JSON output")]
NsOpt = Annotated[str | None, typer.Option("--namespace", "-n", help="namespace (default: settings)")]


def _settings() -> Any:
    """Settings from the environment (pydantic-settings is imported by the commands that need it)."""
    from .settings import from_environment

    return from_environment()


def _open(db: str | Path | None, **kw: Any):
    from .settings import from_environment
    from .store import MemoryStore

    if "settings" not in kw:
        settings = from_environment()
        if "vector_search" not in settings.model_fields_set:
            # one command, one or two queries: sqlite-vec's KNN in the file beats loading the
            # whole in-process vector index first (seconds at 100k memories)
            settings = settings.model_copy(update={"vector_search": "vec0"})
        kw["settings"] = settings
    return MemoryStore(db, **kw)


def _db_file(db: str | Path | None) -> Path | None:
    """The file a --db value (or the settings' default) names; None for a server database URL."""
    raw = str(db if db is not None else _settings().db)
    if raw.startswith("sqlite:///"):
        raw = raw[len("sqlite:///") :]
    elif "://" in raw:
        return None
    return Path(raw).expanduser()


def _open_existing(db: str | Path | None, **kw: Any):
    """Open a database that must exist already: a mistyped --db is refused, never created."""
    from .errors import DatabaseOpenError

    path = _db_file(db)
    if path is not None and not path.exists():
        raise DatabaseOpenError(
            f"no database at {path}: create one with `harness-memory init --db {path}` "
            "(or pass the --db of an existing one)"
        )
    return _open(db, **kw)


def _open_creating(db: str | Path | None, **kw: Any):
    """Open a database, creating it (and its folder) if needed; a creation is said on stderr."""
    path = _db_file(db)
    new = path is not None and not path.exists()
    store = _open(db, **kw)
    if new:
        err.print(f"created {path}", highlight=False, markup=False, soft_wrap=True)  # a path is never wrapped
    return store


def _check_before_creating(
    db: str | Path | None,
    *,
    content: str | None = None,
    type: str | None = None,
    read: Path | None = None,
    jsonl: bool = False,
) -> None:
    """The input checks a store would make, made before a command creates a database: bad input changes nothing, and
    a database that does not exist yet is not left behind by a command that then refuses its input (a new store knows
    the built-in types and the ones the settings register, as ``TypeRegistry`` does)."""
    path = _db_file(db)
    if path is None or path.exists():
        return  # the store checks it as always
    from . import validation as v
    from .errors import FileAccessError
    from .memory_types import TypeRegistry
    from .portability import check_jsonl_header
    from .settings import from_environment

    if content is not None or type is not None:
        settings = from_environment()
        if content is not None:
            v.text(content, "content", max_bytes=settings.max_content_bytes)
        if type is not None:
            TypeRegistry(settings.extra_types).check(type)
    if read is not None and jsonl:
        check_jsonl_header(read)  # (a missing or unreadable file included)
    elif read is not None and not Path(read).is_file():
        raise FileAccessError(f"cannot read {read}: no such file")


def _emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, default=str, ensure_ascii=False, indent=2) + "\n")


def _mem_dict(m) -> dict:
    return m.model_dump(mode="json")


@app.command()
def init(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Create (or migrate) the database."""
    with _open_creating(db) as s:
        info = {"db": str(s.path), "embedder": s.embedder.name, "types": list(s.memory_types)}
    _emit(info) if as_json else out.print(f"[green]ready[/] {info['db']} (embedder {info['embedder']})")


@app.command()
def remember(
    content: str,
    type: Annotated[str, typer.Option("--type", "-t", help="memory type")],
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            "-a",
            help="agent id: the memory's owner (scope agent: only this agent recalls it; scope global: every agent)",
        ),
    ],
    scope: Annotated[str, typer.Option(help="agent or global")] = "agent",
    tag: Annotated[list[str] | None, typer.Option("--tag", help="tag (repeatable)")] = None,
    key: Annotated[str | None, typer.Option(help="upsert key")] = None,
    task_signature: Annotated[str | None, typer.Option()] = None,
    error: Annotated[str | None, typer.Option(help="raw error text")] = None,
    importance: Annotated[float, typer.Option()] = 0.5,
    ttl_hours: Annotated[float | None, typer.Option(help="expire after this many hours")] = None,
    metadata: Annotated[str | None, typer.Option(help="a JSON object stored with the memory")] = None,
    namespace: NsOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store a memory (duplicates reinforce the existing one); creates the database if needed."""
    meta = None
    if metadata is not None:
        from .errors import InvalidInputError

        try:
            meta = json.loads(metadata)
        except ValueError as exc:
            raise InvalidInputError(f"--metadata must be a JSON object: {exc}") from None
        if not isinstance(meta, dict):
            raise InvalidInputError('--metadata must be a JSON object, e.g. \'{"ticket": "OPS-12"}\'')
    _check_before_creating(db, content=content, type=type)
    with _open_creating(db) as s:
        m = s.remember(
            content,
            type=type,
            agent_id=agent,
            scope=scope,
            tags=tag or (),
            key=key,
            metadata=meta,
            task_signature=task_signature,
            error=error,
            importance=importance,
            namespace=namespace,
            ttl=None if ttl_hours is None else ttl_hours * 3600.0,
        )  # seconds: checked by the store
    _emit(_mem_dict(m)) if as_json else out.print(
        f"[green]stored[/] #{m.id} ({m.type}, {m.scope}) {escape(m.content[:80])}"
    )


@app.command()
def recall(
    query: str,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            "-a",
            help="agent id: recall sees this agent's memories and global ones (default: global ones only)",
        ),
    ] = None,
    type: Annotated[list[str] | None, typer.Option("--type", "-t")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag")] = None,
    task_signature: Annotated[str | None, typer.Option()] = None,
    error: Annotated[str | None, typer.Option()] = None,
    limit: Annotated[int, typer.Option("--limit", "-k")] = 10,
    explain: Annotated[bool, typer.Option(help="show each score component")] = False,
    min_confidence: Annotated[
        float | None,
        typer.Option(
            help="keep only hits with at least this confidence (0-1; the injection gate is settings.confidence.inject_min)"
        ),
    ] = None,
    namespace: NsOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search what an agent may see (its own memories and global ones)."""
    s = _open_existing(db)
    try:
        hits = s.recall(
            query,
            agent_id=agent,
            types=type,
            tags=tag,
            task_signature=task_signature,
            error=error,
            limit=limit,
            namespace=namespace,
            min_confidence=min_confidence,
        )
        hidden = _others_memories(s, agent, namespace) if not hits else 0
    except BaseException:
        _close_after_recall(s)
        raise
    # the answer first: the store's close writes the recall's bookkeeping, which waits for the write lock (up to
    # busy_timeout_ms) while another process holds it; the hits found are given whatever that wait comes to
    _show_recall(hits, hidden, agent=agent, explain=explain, as_json=as_json)
    _close_after_recall(s)


def _close_after_recall(s: Any) -> None:
    """Close a store a recall used: bookkeeping it could not write (the lock stayed taken) is said, not an error of
    the recall, whose answer was given."""
    from .errors import DatabaseLockedError

    try:
        s.close()
    except DatabaseLockedError as exc:
        err.print(
            f"warning: the recall's bookkeeping (which memories it returned) was not written: {exc}",
            markup=False,
            highlight=False,
        )


def _show_recall(hits: list, hidden: int, *, agent: str | None, explain: bool, as_json: bool) -> None:
    if as_json:
        _emit(
            [
                {"score": h.score, "confidence": h.confidence, "explain": h.explain(), "memory": _mem_dict(h.memory)}
                for h in hits
            ]
        )
        return
    print_hits(hits, explain=explain)
    if hidden:
        who = f"agent {agent!r}" if agent else "global scope (no --agent)"
        err.print(
            f"note: nothing visible to {who}, but this namespace holds {plural(hidden, 'memory', 'memories')} "
            "of other agents: pass --agent/-a",
            markup=False,
            highlight=False,
        )


def _others_memories(s, agent: str | None, namespace: str | None) -> int:
    """How many memories of the namespace the asking agent cannot see (a count only)."""
    st = s.stats(namespace=namespace)
    return sum(r["count"] for r in st.get("by_agent_type", []) if r["agent_id"] != agent)


def print_hits(hits, *, explain: bool = False, title: str | None = None) -> None:
    t = Table(title=title, show_lines=explain)
    for col in ("id", "score", "confidence", "type", "agent", "content"):
        t.add_column(col, overflow="fold")
    for h in hits:
        m = h.memory
        content = escape(m.content if len(m.content) < 160 else m.content[:157] + "...")
        if explain:
            content += "\n[dim]" + escape(h.breakdown.describe()) + "[/]"
        conf = "-" if h.confidence is None else f"{h.confidence:.2f}"
        t.add_row(str(m.id), f"{h.score:.3f}", conf, m.type, escape(m.agent_id), content)
    out.print(t if hits else "[yellow]no memories matched[/]")


def _read_log(path: str) -> str:
    """A log as the tools wrote it: bytes decoded as UTF-8 (bad bytes replaced), line ends kept."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        from .errors import FileAccessError

        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise FileAccessError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    return data.decode("utf-8", errors="replace")


@app.command()
def signature(
    file: Annotated[str, typer.Argument(help="the error text or whole log (- for standard input)")],
    baseline: Annotated[str | None, typer.Option(help="log of the last passing run of the same job")] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Sign an error or a whole log: the decisive excerpt, its line span, category and signature."""
    text = _read_log(file)
    base = _read_log(baseline) if baseline is not None else None
    with _open_creating(db) as s:  # (the template miner's state is the database's: a new one is said)
        sig = s.error_signature(text, baseline=base)
    if as_json:
        _emit(sig.model_dump(mode="json"))
        return
    lo, hi = sig.excerpt_lines or (0, 0)
    out.print(f"[bold]{sig.id}[/] {sig.category}" + (f" ({sig.exception})" if sig.exception else ""))
    out.print(f"template: {escape(sig.template)}")
    if sig.frame:
        out.print(f"frame:    {escape(sig.frame)}")
    out.print(f"lines {lo}-{hi}:")
    out.print(escape(sig.excerpt), highlight=False)


@app.command()
def show(memory_id: int, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Show one memory with all its fields."""
    with _open_existing(db) as s:
        m = s.get(memory_id)
    if as_json:
        _emit(_mem_dict(m))
        return
    t = Table(show_header=False)
    for k, val in _mem_dict(m).items():
        t.add_row(k, escape(json.dumps(val, ensure_ascii=False) if isinstance(val, (list, dict)) else str(val)))
    out.print(t)


@app.command()
def forget(memory_id: int, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Delete one memory."""
    with _open_existing(db) as s:
        s.forget(memory_id)
    _emit({"deleted": memory_id}) if as_json else out.print(f"[green]deleted[/] #{memory_id}")


VIEWS = [
    ("v_memories_by_agent_type", "memories by agent and type"),
    ("v_effective_memories", "most effective memories (applied 3+ times)"),
    ("v_technique_summary", "technique effectiveness"),
    ("v_access_by_day", "memory access by day (last 30 days)"),
    ("v_recall_to_success", "recall to success"),
    ("v_job_runs", "job runs"),
    ("v_tool_metrics", "tool calls per tool"),
]


@app.command()
def stats(
    namespace: NsOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
    rows: Annotated[int, typer.Option(help="rows per view", min=0, max=10_000)] = 15,
) -> None:
    """Counts, pending embeddings, the embedder, and the metrics views."""
    with _open_existing(db) as s:
        st = s.stats(namespace=namespace)
        views = {}
        for name, _title in VIEWS:
            cur = s._core.backend.execute(f"SELECT * FROM {name} LIMIT ?", (rows,))
            cols = [d[0] for d in cur.description]
            views[name] = [dict(zip(cols, r)) for r in cur.fetchall()]
    if as_json:
        _emit({**st, "views": views})
        return
    out.print(
        f"{plural(st['memories'], 'memory', 'memories')} in {plural(st['namespaces'], 'namespace')}; "
        f"embedder {st['embedder']['name']}; "
        f"{st['pending_embeddings']} pending embeddings; {st['archived']} archived"
    )
    for name, title in VIEWS:
        data = views[name]
        if not data:
            continue
        t = Table(title=title)
        for col in data[0]:
            t.add_column(col, overflow="fold")
        for r in data:
            t.add_row(
                *["-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))[:80] for v in r.values()]
            )
        out.print(t)


jobs_app = typer.Typer(help="Maintenance jobs: decay, expire, consolidate, compact, backfill.", no_args_is_help=True)
app.add_typer(jobs_app, name="jobs")


@jobs_app.command("status")
def jobs_status(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Recent runs, their counts and errors, and the leases held now."""
    with _open_existing(db) as s:
        st = s.job_status()
    for r in st["runs"]:  # counts are stored as JSON text: objects in the output
        if isinstance(r.get("counts"), str):
            try:
                r["counts"] = json.loads(r["counts"])
            except ValueError:
                pass  # not JSON: shown as stored
    if as_json:
        _emit(st)
        return
    t = Table(title="job runs (newest first)")
    for col in ("job", "status", "started", "seconds", "counts / error", "holder"):
        t.add_column(col, overflow="fold")
    from datetime import datetime

    for r in st["runs"]:
        started = datetime.fromtimestamp(r["started_at"], tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
        secs = "-" if r["finished_at"] is None else f"{r['finished_at'] - r['started_at']:.2f}"
        counts = r["counts"]
        if isinstance(counts, dict):
            counts = ", ".join(f"{k} {v}" for k, v in counts.items() if k != "plan")
        t.add_row(r["job"], r["status"], started, secs, r["error"] or str(counts), r["holder"])
    out.print(t if st["runs"] else "[yellow]no job has run yet[/]")
    for lease in st["leases"]:
        out.print(f"lease: {lease['job']} held by {lease['holder']}")


@jobs_app.command("run")
def jobs_run(
    name: str,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the plan, change nothing")] = False,
    namespace: NsOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run one job now (under its lease), with a progress bar."""
    from .errors import InvalidInputError
    from .jobs import JOBS

    if name not in JOBS:
        raise InvalidInputError(f"unknown job {name!r}; jobs: {', '.join(sorted(JOBS))}")
    kwargs: dict[str, Any] = {"dry_run": dry_run}
    if namespace is not None and name == "consolidate":
        kwargs["namespace"] = namespace
    with _open_existing(db) as s:
        # only decay and consolidate report progress: the others run without a bar
        with _progress(name, disable=as_json or name not in ("decay", "consolidate")) as prog:
            task = prog.add_task(name, total=None)
            if name in ("decay", "consolidate"):
                kwargs["progress"] = lambda done, total: prog.update(task, completed=done, total=total)
            run = s.run_job(name, **kwargs)
    if as_json:
        _emit(run.model_dump())
        return
    colour = {"ok": "green", "skipped": "yellow", "dry_run": "cyan"}.get(run.status, "red")
    out.print(
        f"[{colour}]{run.status}[/] {name}: "
        + (run.error or ", ".join(f"{k} {v}" for k, v in run.counts.items() if k != "plan"))
    )
    for step in run.counts.get("plan", []):
        what = (
            f"join pattern #{step['pattern']}: {step['join']}" if step["pattern"] else f"new pattern: {step['members']}"
        )
        out.print(f"  {'/'.join(map(str, step['group']))}: {what}")


@app.command()
def scheduler(
    db: DbOpt = None,
    only: Annotated[list[str] | None, typer.Option("--only", help="run only these jobs")] = None,
) -> None:
    """Run the maintenance jobs on their schedules until SIGINT or SIGTERM."""
    import logging
    import signal

    from .jobs.scheduler import build_scheduler

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings = _settings()
    path = db or settings.db
    with _open(path) as s:  # create/migrate once, fail fast on a bad database
        shown = s.path  # a server's URL without its password
    sched = build_scheduler(path, settings, blocking=True, only=only)

    def stop(signum, frame):
        err.print(f"signal {signum}: stopping the scheduler")
        sched.shutdown(wait=False)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    err.print(f"scheduler running on {shown}: " + ", ".join(f"{j.id} ({j.trigger})" for j in sched.get_jobs()))
    sched.start()
    err.print("scheduler stopped")


@app.command("export")
def export_(
    path: Path,
    format: Annotated[str, typer.Option("--format", "-f", help="jsonl or markdown")] = "jsonl",
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="agent (required for markdown)")] = None,
    namespace: NsOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export memories as versioned JSONL, or one agent's MEMORY.md."""
    with _open_existing(db) as s:
        if format == "jsonl":
            n = s.export_jsonl(path, namespace=namespace, agent_id=agent)
        elif format == "markdown":
            if not agent:
                raise typer.BadParameter("--agent is required for markdown")
            n = s.export_markdown(agent, path, namespace=namespace)
        else:
            raise typer.BadParameter("format must be jsonl or markdown")
    _emit({"exported": n, "path": str(path)}) if as_json else out.print(
        f"[green]exported[/] {plural(n, 'memory', 'memories')} to {escape(str(path))}"
    )


@app.command("import")
def import_(
    path: Path,
    format: Annotated[str, typer.Option("--format", "-f", help="jsonl or markdown")] = "jsonl",
    agent: Annotated[str | None, typer.Option("--agent", "-a")] = None,
    namespace: NsOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import a JSONL export (idempotent) or apply an edited MEMORY.md; creates the database if needed."""
    _check_before_creating(db, read=path, jsonl=format == "jsonl")
    with _open_creating(db) as s:
        if format == "jsonl":
            r = s.import_jsonl(path)
        elif format == "markdown":
            if not agent:
                raise typer.BadParameter("--agent is required for markdown")
            r = s.import_markdown(agent, path, namespace=namespace)
        else:
            raise typer.BadParameter("format must be jsonl or markdown")
    rep = {
        "inserted": r.inserted,
        "updated": r.updated,
        "unchanged": r.unchanged,
        "deleted": r.deleted,
        "skipped_file": r.skipped_file,
    }
    if format == "jsonl":  # the records after the memories (docs/backends.md, moving data)
        rep.update(
            tool_calls=r.tool_calls,
            documents=r.documents,
            history=r.state.history,
            access_log=r.state.access,
            attempts=r.state.attempts,
            techniques=r.state.techniques,
            templates=r.state.templates,
        )
    _emit(rep) if as_json else out.print(", ".join(f"{k} {v}" for k, v in rep.items()))


@app.command()
def reembed(
    embedder: Annotated[str | None, typer.Option(help="embedder name (default: settings)")] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-embed every memory with the configured (new) embedder."""
    from .embedders import embedder_from_name

    st = _settings()
    e = embedder_from_name(embedder or st.embedder, base_url=st.embedder_base_url, api_key=st.embedder_api_key)
    with _open_existing(db, embedder=e, allow_embedder_change=True) as s:
        with _progress("re-embedding", disable=as_json) as prog:
            task = prog.add_task("reembed", total=None)
            n = s.reembed(progress=lambda done, total: prog.update(task, completed=done, total=total))
    _emit({"reembedded": n, "embedder": e.name}) if as_json else out.print(
        f"[green]re-embedded[/] {plural(n, 'memory', 'memories')} with {escape(e.name)}"
    )


@app.command()
def demo(
    db: Annotated[Path, typer.Option("--db", help="demo database file")] = Path("harness-memory-demo.db"),
    as_json: JsonOpt = False,
) -> None:
    """Run a scripted harness end to end: failures, fixes, recall for a new task, credit."""
    from .demo import run_demo

    run_demo(db, console=out, as_json=as_json)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="bind address")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 8765,
    db: DbOpt = None,
) -> None:
    """Serve the REST API (extra [api]). A non-loopback address needs HARNESS_MEMORY_API_TOKEN(S)."""
    settings = _settings()
    if host not in ("127.0.0.1", "::1", "localhost") and not (settings.api_token or settings.api_tokens):
        err.print(
            f"[red]error:[/] refusing to serve on {host} without a token: set HARNESS_MEMORY_API_TOKEN "
            "or HARNESS_MEMORY_API_TOKENS"
        )
        raise SystemExit(2)
    _open_existing(db).close()  # a mistyped --db is refused here, not created
    try:
        import uvicorn

        from .api import create_app
        from .dashboard.server import dashboard_url
    except ImportError:
        err.print("error: the REST API needs the api extra: pip install 'harness-memory[api]'", markup=False)
        raise SystemExit(2) from None
    # the pages under /dashboard (a ?token= link when a token opens them; docs/dashboard.md)
    out.print(f"dashboard: {dashboard_url(host, port, settings)}", soft_wrap=True, highlight=False, markup=False)
    uvicorn.run(create_app(str(db or settings.db), settings), host=host, port=port, log_level="info")


@app.command()
def dashboard(
    host: Annotated[str, typer.Option(help="bind address")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 8766,
    db: DbOpt = None,
) -> None:
    """Serve the dashboard (extra [api]): what the memory learned and whether it pays off (docs/dashboard.md)."""
    try:
        import uvicorn

        from .dashboard.server import build_app, check_bind, dashboard_url
    except ImportError:
        err.print("[red]error:[/] the dashboard needs: pip install 'harness-memory[api]'")
        raise SystemExit(2) from None
    settings = _settings()
    check_bind(host, settings)
    application = build_app(db or settings.db, settings)
    out.print(f"dashboard: {dashboard_url(host, port, settings)}", soft_wrap=True, highlight=False, markup=False)
    uvicorn.run(application, host=host, port=port, log_level="info")


@app.command()
def mcp(db: DbOpt = None) -> None:
    """Serve the MCP tools over stdio (extra [mcp]); the agent identity is HARNESS_MEMORY_MCP_AGENT_ID."""
    import importlib.util

    try:
        if importlib.util.find_spec("mcp") is None:
            raise ImportError("mcp")
        from .mcp_server import serve_stdio
    except ImportError:
        err.print("error: the MCP server needs the mcp extra: pip install 'harness-memory[mcp]'", markup=False)
        raise SystemExit(2) from None
    _open_existing(db).close()  # a mistyped --db is refused here, not created
    settings = _settings()
    serve_stdio(str(db or settings.db), settings)


# issue 12: `run` and `hook claude-code` live in harness_memory/adapters
from .adapters.cli import register as _register_adapters  # noqa: E402

_register_adapters(app)

# issue 14: tool calls, episodes and reflection, documents, the MEMORY.md watch
from .cli_capabilities import register as _register_capabilities  # noqa: E402

_register_capabilities(app)


# issue 16: the learning half (select-technique, outcome, apply, has-seen)
from .cli_learning import register as _register_learning  # noqa: E402

_register_learning(app)


@app.command("cli-server")
def cli_server_command(
    action: Annotated[str, typer.Argument(help="status or stop")] = "status",
) -> None:
    """Show or stop the background server that makes short commands start fast (docs/configuration.md)."""
    from .cli_server import manage

    raise SystemExit(manage([action]))


def _version(value: bool) -> None:
    if value:
        from . import __version__

        sys.stdout.write(f"harness-memory {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="show the full traceback of an error")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    """harness-memory: the learning memory of a task harness."""
    _state["debug"] = debug


_state: dict[str, bool] = {"debug": False}


def _fail(kind: str, message: str, code: int) -> None:
    # one line, whatever the message holds (a path, a multi-line driver message)
    line = " ".join(str(message).split())
    if "--json" in sys.argv[1:]:  # a machine reads the output: the error is JSON too (on stdout)
        _emit({"error": kind, "detail": line, "exit_code": code})
        raise SystemExit(code)
    err.print(f"[red]error:[/] {escape(kind)}: {escape(line)}", soft_wrap=True)
    raise SystemExit(code)


_click_app: Any = None


def click_command() -> Any:
    """The click command Typer builds from the app (once per process: it inspects every signature,
    ~0.1 s, so the warm-start server builds it before it forks)."""
    global _click_app
    if _click_app is None:
        _click_app = typer.main.get_command(app)
    return _click_app


def main(prog_name: str | None = None) -> None:
    """Run the command line on ``sys.argv`` (``prog_name``: what usage lines call the program)."""
    debug = _state["debug"] or "--debug" in sys.argv[1:]
    try:
        click_command()(prog_name=prog_name)
    except HarnessMemoryError as exc:
        if debug:
            raise
        _fail(type(exc).__name__, str(exc), 2)
    except OSError as exc:  # a missing folder, a permission, a full disk
        if debug:
            raise
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        _fail(type(exc).__name__, f"{exc.strerror or exc}{where}", 2)
    except Exception as exc:
        if debug:
            raise
        from .sqlite_backend import DatabaseError  # imported here: a command that never opens one need not

        if isinstance(exc, DatabaseError):  # the database refused an operation after it was opened
            _fail("DatabaseError", f"{exc} (run with --debug for the traceback)", 2)
        _fail(f"internal error {type(exc).__name__}", f"{exc} (run with --debug for the traceback)", 1)


if __name__ == "__main__":
    main()
