"""``harness-memory hook claude-code``: Claude Code's hook protocol (and any agent speaking its JSON).

One hook event arrives as a JSON object on stdin; the answer is one JSON object on stdout, exit
code 0, always:

- ``SessionStart`` and ``UserPromptSubmit``: the relevant experience (``on_task_start``'s prompt
  section, memories quoted as data, within ``budget_chars``) as
  ``hookSpecificOutput.additionalContext``.
- ``PostToolUseFailure`` of a shell tool, or ``PostToolUse`` of a shell tool whose response
  reports a non-zero exit code or an error: ``on_task_error`` (the error signed, the failure
  recorded) and its advice as ``additionalContext``. A tool call the user interrupted is not an
  error. The successful shell commands after an error are remembered until the failed command
  passes again.
- ``Stop`` and ``SessionEnd``: ``on_task_complete`` for the turn: when the failed command passed
  again, the commands run in between are stored as what fixed the error (an error→fix link);
  when the turn ended without an error, or with it fixed, the injected memories are credited as
  helpful (a turn that ends with the error unresolved credits nothing: its outcome is unknown).
  The answer is ``{}`` (a hook never asks Claude to keep going).
- Every other ``PostToolUse``/``PostToolUseFailure`` (any tool): the call goes into the tool-call
  log (``MemoryStore.log_tool_call``: name, type, parameters, outcome, error; the output only for
  shell tools); the answer is ``{}``.
- Anything else (``PreToolUse``, notifications, …) and interrupted calls: ``{}`` without opening
  the database.

A session is a task (``claude-code:<session_id>``); its namespace is derived from the project
folder (``$CLAUDE_PROJECT_DIR``, else the event's ``cwd``) unless one is given. What a session
has injected and its pending error live in a ``context`` memory keyed by the task (24 h TTL).

The hook never blocks the agent: a broken database, bad input or a call slower than
``budget_ms`` (default 2 s) yields ``{}`` and one ``harness-memory hook:`` line on stderr.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from ..errors import ConfigurationError, FileAccessError, InvalidInputError

__all__ = ["HOOK_EVENTS", "SHELL_TOOLS", "handle_event", "install", "main"]

SHELL_TOOLS = frozenset({"Bash", "bash", "Shell", "shell", "run_shell_command", "shell_command", "exec_command"})
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
TOOL_EVENTS = ("PostToolUse", "PostToolUseFailure")
END_EVENTS = ("Stop", "SessionEnd")
# what --install writes: event -> matcher (None: the event takes no matcher)
HOOK_EVENTS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PostToolUse": "Bash",
    "PostToolUseFailure": "Bash",
    "Stop": None,
    "SessionEnd": None,
}
MAX_EVENT_BYTES = 16 << 20
MAX_ERROR_CHARS = 16_000
_EXIT_FIELDS = ("exit_code", "exitCode", "returncode", "return_code", "code")


def _log(stderr: TextIO, message: str) -> None:
    try:
        stderr.write("harness-memory hook: " + " ".join(message.split())[:500] + "\n")
        stderr.flush()
    except (OSError, ValueError):
        pass


def project_folder(payload: dict[str, Any]) -> str:
    """``$CLAUDE_PROJECT_DIR``, else the event's ``cwd``, else this process's folder (absolute)."""
    cwd = payload.get("cwd")
    folder = os.environ.get("CLAUDE_PROJECT_DIR") or (cwd if isinstance(cwd, str) and cwd.strip() else None)
    return os.path.abspath(folder or os.getcwd())


def project_namespace(payload: dict[str, Any]) -> str:
    """One namespace per project folder: its name and 10 hex digits of its absolute path's hash."""
    folder = project_folder(payload)
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in Path(folder).name)[:60] or "root"
    return f"{name}-{hashlib.sha256(folder.encode('utf-8', 'replace')).hexdigest()[:10]}"


def _shell_failure(payload: dict[str, Any]) -> str | None:
    """The error text of a failed shell call, or None (success, interrupted, not a shell tool)."""
    if payload.get("tool_name") not in SHELL_TOOLS:
        return None
    if payload.get("hook_event_name") == "PostToolUseFailure":
        if payload.get("is_interrupt"):
            return None
        err = payload.get("error", payload.get("error_message"))
        if isinstance(err, str) and err.strip():
            return err
        return "tool call failed"
    resp = payload.get("tool_response")
    if not isinstance(resp, dict) or resp.get("interrupted"):
        return None
    code = next((resp[f] for f in _EXIT_FIELDS if f in resp), 0)
    failed = (isinstance(code, int) and not isinstance(code, bool) and code != 0) or bool(
        resp.get("is_error") or resp.get("isError")
    )
    if not failed:
        return None
    parts = [
        val for k in ("stderr", "stdout", "error", "output") if isinstance(val := resp.get(k), str) and val.strip()
    ]
    return "\n".join(parts) or f"command exited with status {code}"


def _interrupted(payload: dict[str, Any]) -> bool:
    resp = payload.get("tool_response")
    return bool(payload.get("is_interrupt")) or (isinstance(resp, dict) and bool(resp.get("interrupted")))


def _log_tool_call(store: Any, payload: dict[str, Any], s: _Session, shell_error: str | None) -> None:
    """The call in the tool-call log (docs/tool_calls.md): name, type, parameters, outcome; the
    result only for shell tools (their output, bounded and redacted), never a file's content."""
    tool = payload["tool_name"]
    failed = payload.get("hook_event_name") == "PostToolUseFailure" or shell_error is not None
    error = None
    if failed:
        error = shell_error or payload.get("error", payload.get("error_message"))
        error = error if isinstance(error, str) and error.strip() else "tool call failed"
    params = payload.get("tool_input")
    resp = payload.get("tool_response")
    duration = payload.get("duration_ms")
    try:
        store.log_tool_call(
            tool,
            agent_id=s.agent,
            success=not failed,
            tool_type="shell" if tool in SHELL_TOOLS else ("mcp" if tool.startswith("mcp__") else "builtin"),
            parameters=params if isinstance(params, dict | list) else None,
            result=resp if tool in SHELL_TOOLS and not failed and isinstance(resp, dict | str) else None,
            error=error[-MAX_ERROR_CHARS:] if error else None,
            namespace=s.namespace,
            session_id=s.task_id,
            task_id=s.task_id,
            duration_ms=duration
            if isinstance(duration, int | float) and not isinstance(duration, bool) and 0 <= duration <= 1e11
            else None,
        )
    except InvalidInputError:
        pass  # a tool name or parameters the log refuses: the rest of the answer stands


def _command(payload: dict[str, Any]) -> str:
    ti = payload.get("tool_input")
    cmd = ti.get("command") if isinstance(ti, dict) else None
    return " ".join(str(cmd).split())[:300] if cmd else str(payload.get("tool_name", "tool"))


class _Session:
    """The task of a session, and its state in a ``context`` memory keyed by the task."""

    def __init__(self, store: Any, payload: dict[str, Any], agent: str, namespace: str | None):
        sid = payload.get("session_id")
        if not isinstance(sid, str) or not sid.strip():
            raise InvalidInputError("the event has no session_id")
        self.store = store
        self.agent = agent
        self.namespace = namespace or project_namespace(payload)
        self.task_id = f"claude-code:{' '.join(sid.split())}"[:200]
        self.project = Path(project_folder(payload)).name or "project"
        self._memory = store.get_task_context(agent, self.task_id, namespace=self.namespace)
        self.state: dict[str, Any] = {}
        if self._memory is not None:
            try:
                self.state = json.loads(self._memory.content)
            except ValueError:
                self.state = {}
        if not isinstance(self.state, dict):
            self.state = {}

    def task(self, title: str | None = None, description: str = "") -> dict[str, Any]:
        title = " ".join((title or self.state.get("title") or f"coding session in {self.project}").split())[:2000]
        return {
            "id": self.task_id,
            "title": title or "coding session",
            "description": description[:32_768],
            "agent_id": self.agent,
            "agent_type": "claude-code",
            "namespace": self.namespace,
            "tags": ["claude-code"],
            "session_id": self.task_id,
        }

    def save(self) -> None:
        self.store.set_task_context(
            self.agent, self.task_id, json.dumps(self.state, ensure_ascii=False), namespace=self.namespace
        )

    def clear(self) -> None:
        if self._memory is not None:
            try:
                self.store.forget(self._memory.id)
            except LookupError:
                pass
        self.state = {}


def _context_answer(event: str, text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def handle_event(
    store: Any,
    payload: dict[str, Any],
    *,
    agent: str = "claude-code",
    namespace: str | None = None,
    budget_chars: int = 6000,
) -> dict[str, Any]:
    """The answer to one hook event (a JSON-ready dict); records what the event teaches."""
    event = payload.get("hook_event_name")
    if event in CONTEXT_EVENTS:
        s = _Session(store, payload, agent, namespace)
        if event == "UserPromptSubmit":
            prompt = payload.get("prompt")
            if not isinstance(prompt, str) or not prompt.strip():
                return {}
            first = prompt.strip().splitlines()[0]
            task = s.task(first[:200], prompt)
            s.state["title"] = task["title"][:200]
        else:
            task = s.task()
        ctx = store.on_task_start(task, budget_chars=budget_chars)
        if ctx.injected:
            s.state["injected"] = list(dict.fromkeys([*s.state.get("injected", []), *ctx.injected]))[-50:]
        s.save() if (ctx.injected or event == "UserPromptSubmit") else None
        return _context_answer(event, ctx.prompt)
    if event in TOOL_EVENTS:
        tool = payload.get("tool_name")
        if not isinstance(tool, str) or not tool.strip() or _interrupted(payload):
            return {}  # a call the user interrupted teaches nothing
        s = _Session(store, payload, agent, namespace)
        error = _shell_failure(payload)
        answer: dict[str, Any] = {}
        if error is not None:
            error = error[-MAX_ERROR_CHARS:]
            task = s.task()
            advice = store.on_task_error(task, error)
            store.on_task_complete(task, {"success": False, "summary": f"`{_command(payload)}` failed", "error": error})
            s.state.update(error=error, fixed_by=[], failed_command=_command(payload), resolved=False)
            s.save()
            text = advice.prompt
            if len(text) > budget_chars:
                text = text[: budget_chars - 20].rsplit("\n", 1)[0] + "\n[advice truncated]"
            answer = _context_answer(event, text)
        elif tool in SHELL_TOOLS and event == "PostToolUse" and s.state.get("error") and not s.state.get("resolved"):
            cmd = _command(payload)
            if cmd == s.state.get("failed_command"):
                s.state["resolved"] = True  # the command that failed now passes: what ran between is the fix
            elif cmd not in s.state.get("fixed_by", []):
                s.state["fixed_by"] = [*s.state.get("fixed_by", []), cmd][-5:]
            s.save()
        _log_tool_call(store, payload, s, error)  # after the advice: it names earlier failures of this tool
        return answer
    if event in END_EVENTS:
        s = _Session(store, payload, agent, namespace)
        if not s.state:
            return {}
        from ..lifecycle import Task, TaskContext

        task = s.task()
        error = s.state.get("error")
        fixed_by = s.state.get("fixed_by") or []
        resolved = bool(s.state.get("resolved"))
        injected = [i for i in s.state.get("injected", []) if isinstance(i, int) and not isinstance(i, bool)]
        ctx = TaskContext(
            task=Task.model_validate(task), task_signature=store.task_signature(task), prompt="", injected=injected
        )
        failed = s.state.get("failed_command", "a command")
        if error and resolved and fixed_by:  # the commands run between the failure and its passing re-run
            summary = (
                f"after `{failed}` failed: ran " + "; ".join(f"`{c}`" for c in fixed_by) + f", then `{failed}` passed"
            )
            store.on_task_complete(task, {"success": True, "summary": summary, "error": error}, context=ctx)
        elif not error or resolved:  # nothing new to store (a failure was recorded when it happened)
            for mid in injected:
                try:
                    store.apply(mid, helpful=True, agent_id=agent, session_id=s.task_id, task_id=s.task_id)
                except LookupError:
                    continue
        s.clear()
        return {}
    return {}


def _read_event(stdin: Any) -> dict[str, Any]:
    data = stdin.read(MAX_EVENT_BYTES + 1)
    if isinstance(data, str):
        data = data.encode("utf-8", errors="replace")
    if len(data) > MAX_EVENT_BYTES:
        raise InvalidInputError(f"the hook event is larger than {MAX_EVENT_BYTES} bytes")
    try:
        payload = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError as exc:
        raise InvalidInputError(f"the hook event is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise InvalidInputError("the hook event must be a JSON object")
    return payload


def _needs_store(payload: dict[str, Any]) -> bool:
    event = payload.get("hook_event_name")
    if event in CONTEXT_EVENTS or event in END_EVENTS:
        return True
    tool = payload.get("tool_name")
    return event in TOOL_EVENTS and isinstance(tool, str) and bool(tool.strip()) and not _interrupted(payload)


def main(
    *,
    db: str | Path | None = None,
    agent: str = "claude-code",
    namespace: str | None = None,
    budget_ms: int = 2000,
    budget_chars: int = 6000,
    stdin: Any = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    hard_exit: bool = True,
) -> int:
    """Answer one event from stdin on stdout within ``budget_ms``; always returns 0."""
    start = time.monotonic()
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    answer: dict[str, Any] = {}
    abandoned = False
    try:
        payload = _read_event(stdin)
        if _needs_store(payload):
            box: dict[str, Any] = {}

            def work() -> None:
                try:
                    from ..cli import _open  # sqlite-vec's KNN, as a command: no whole vector index to load

                    with _open(db) as store:
                        box["answer"] = handle_event(
                            store, payload, agent=agent, namespace=namespace, budget_chars=budget_chars
                        )
                except BaseException as exc:  # noqa: BLE001 - reported below, never raised at the agent
                    box["error"] = exc

            t = threading.Thread(target=work, name="harness-memory-hook", daemon=True)
            t.start()
            t.join(max(0.0, budget_ms / 1000 - (time.monotonic() - start)))
            if t.is_alive():
                abandoned = True
                _log(stderr, f"no answer within {budget_ms} ms for {payload.get('hook_event_name')}: answered empty")
            elif "error" in box:
                exc = box["error"]
                _log(stderr, f"{payload.get('hook_event_name')}: {type(exc).__name__}: {exc}; answered empty")
            else:
                answer = box.get("answer") or {}
    except Exception as exc:  # noqa: BLE001 - bad input: an empty, valid answer
        _log(stderr, f"{type(exc).__name__}: {exc}; answered empty")
    try:
        stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        stdout.flush()
    except (OSError, ValueError):
        pass
    if abandoned and hard_exit:
        os._exit(0)  # do not wait for the slow call; SQLite rolls back an unfinished write
    return 0


def _hook_command(db: str | Path | None, agent: str, namespace: str | None) -> str:
    exe = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if exe is not None and exe.name == "harness-memory" and exe.exists():
        parts = [str(exe.resolve())]
    else:
        parts = [sys.executable, "-m", "harness_memory"]
    parts += ["hook", "claude-code"]
    if db is not None:
        parts += ["--db", str(db) if "://" in str(db) else str(Path(db).expanduser().resolve())]
    if agent != "claude-code":
        parts += ["--agent", agent]
    if namespace is not None:
        parts += ["--namespace", namespace]
    return shlex.join(parts)


def install(
    project: str | Path,
    *,
    db: str | Path | None = None,
    agent: str = "claude-code",
    namespace: str | None = None,
    timeout_s: int = 10,
    all_tools: bool = False,
) -> list[str]:
    """Merge the hook configuration into ``<project>/.claude/settings.json`` (created if missing).

    Existing settings and hooks are kept; an event that already runs this hook command is left as
    it is. The tool events match ``Bash`` only, or every tool with ``all_tools`` (each call then
    goes into the tool-call log, at the cost of one hook process per tool use). Returns lines
    saying what changed. A settings file that is not a JSON object raises
    :class:`ConfigurationError` and nothing is written."""
    from .. import validation as v

    v.ident(agent, "agent")
    v.ident(namespace, "namespace", optional=True)
    folder = Path(project).expanduser()
    if not folder.is_dir():
        raise FileAccessError(f"project folder {folder} does not exist")
    path = folder / ".claude" / "settings.json"
    settings: dict[str, Any] = {}
    if path.exists():
        try:
            settings = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from None
        if not isinstance(settings, dict):
            raise ConfigurationError(f"{path} must hold a JSON object; nothing was changed")
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigurationError(f'"hooks" in {path} must be an object; nothing was changed')
    command = _hook_command(db, agent, namespace)
    changes = []
    for event, matcher in HOOK_EVENTS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigurationError(f'"hooks.{event}" in {path} must be a list; nothing was changed')
        present = any(
            isinstance(g, dict)
            and isinstance(g.get("hooks"), list)
            and any(isinstance(h, dict) and "hook claude-code" in str(h.get("command", "")) for h in g["hooks"])
            for g in groups
        )
        if present:
            continue
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout_s}]}
        if matcher is not None:
            group = {"matcher": "*" if all_tools else matcher, **group}
        groups.append(group)
        if matcher is not None:
            changes.append(f"added {event} (matcher {group['matcher']}): {command}")
        else:
            changes.append(f"added {event}: {command}")
    if not changes:
        return [f"{path}: the hooks are already installed; nothing changed"]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".harness-memory.tmp")
    tmp.write_text(json.dumps(settings, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return [f"{path}:"] + [f"  {c}" for c in changes]
