"""``harness-memory run``: any command becomes a learning task.

The command runs with its output streamed through unchanged (stdout to stdout, stderr to
stderr, byte for byte) while a bounded copy is kept: the whole output up to ``keep_bytes``,
beyond that its head and its tail. On exit 0 a success is recorded; on a failure the output is
signed (the whole-log signature), the attempt is recorded, and the advice (seen before? what
fixed it, the next technique) is printed to stderr between ``[harness-memory]`` marker lines.
With ``retries`` the command runs again with the selected technique in
``HARNESS_MEMORY_TECHNIQUE`` and the advice in the file named by ``HARNESS_MEMORY_ADVICE_FILE``.

The exit status is always the command's own (``128 + N`` when a signal N killed it, as a shell
reports it). SIGTERM and SIGHUP received by this process are forwarded to the command, and so is
SIGINT when standard input is not a terminal (at a terminal, Ctrl-C already reaches the whole
foreground process group); an attempt ended that way is recorded as interrupted and not retried.
The memory never stands in the command's way: the database is opened only once the first
attempt has ended, and when it cannot be opened or a write fails, a one-line note goes to stderr
and the exit status is the command's.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Self

from ..errors import InvalidInputError

if TYPE_CHECKING:  # pragma: no cover
    from ..store import MemoryStore

__all__ = ["BoundedLog", "RunOptions", "RunReport", "run_command"]

DEFAULT_KEEP_BYTES = 4 << 20
MARK = "[harness-memory]"
PIPE_GRACE_SECONDS = 5.0
_FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class BoundedLog:
    """The whole output up to ``limit`` bytes; beyond that the first quarter of the limit and
    the last three quarters, joined by a line saying how much was left out."""

    def __init__(self, limit: int = DEFAULT_KEEP_BYTES):
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1024:
            raise InvalidInputError("keep_bytes must be an int of at least 1024")
        self.limit = limit
        self.head_limit = limit // 4
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self._lock:
            self.total += len(chunk)
            room = self.head_limit - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if not chunk:
                return
            self.tail.append(chunk)
            self.tail_size += len(chunk)
            while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
                self.tail_size -= len(self.tail.popleft())

    def data(self) -> bytes:
        with self._lock:
            tail = b"".join(self.tail)
            if self.total <= self.limit:
                return bytes(self.head) + tail
            tail = tail[-self.tail_limit :]
            omitted = self.total - len(self.head) - len(tail)
            nl = tail.find(b"\n")  # start the tail at a line
            if 0 <= nl < 4096:
                omitted += nl + 1
                tail = tail[nl + 1 :]
            return bytes(self.head) + f"\n[... {omitted} bytes left out by harness-memory ...]\n".encode() + tail

    def text(self) -> str:
        return self.data().decode("utf-8", errors="replace")


@dataclass
class RunOptions:
    task_id: str
    command: list[str]
    agent_id: str = "ci"
    title: str | None = None
    namespace: str | None = None
    retries: int = 0
    baseline_log: str | None = None
    keep_bytes: int = DEFAULT_KEEP_BYTES
    techniques: list[str] | None = None


@dataclass
class Attempt:
    number: int
    technique: str | None
    returncode: int
    seconds: float
    interrupted: str | None = None  # the signal's name
    signature: str | None = None


@dataclass
class RunReport:
    exit_code: int
    attempts: list[Attempt] = field(default_factory=list)
    memory_ok: bool = True


def _note(message: str, stream: BinaryIO | None = None) -> None:
    stream = stream or sys.stderr.buffer
    stream.write(f"{MARK} {message}\n".encode("utf-8", errors="replace"))
    stream.flush()


def _pump(src: BinaryIO, dst: BinaryIO, log: BoundedLog) -> None:
    fd = src.fileno()
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        log.add(chunk)
        try:
            dst.write(chunk)
            dst.flush()
        except (OSError, ValueError):
            pass  # our own output is gone (closed pipe): keep draining the child
    src.close()


def exit_status(returncode: int) -> int:
    """The command's exit status as a shell reports it: ``128 + N`` for a death by signal N."""
    return 128 - returncode if returncode < 0 else returncode


class _Forwarder:
    """Forwards SIGTERM/SIGHUP (and SIGINT when stdin is not a terminal) to the running child,
    and remembers the first one received."""

    def __init__(self) -> None:
        self.child: subprocess.Popen[bytes] | None = None
        self.received: int | None = None
        self._old: dict[int, Any] = {}
        self._interactive = os.isatty(0)

    def __enter__(self) -> Self:
        if threading.current_thread() is threading.main_thread():
            for sig in _FORWARDED:
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received is None:
            self.received = signum
        child = self.child
        if child is None or child.poll() is not None:
            return
        if signum == signal.SIGINT and self._interactive:
            return  # the terminal sent it to the child too
        try:
            child.send_signal(signum)
        except OSError:
            pass


def _spawn(
    command: list[str], env: dict[str, str], log: BoundedLog, fwd: _Forwarder, stdout: BinaryIO, stderr: BinaryIO
) -> tuple[int, float]:
    start = time.monotonic()
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    except FileNotFoundError:
        msg = f"{command[0]}: command not found\n".encode()
        log.add(msg)
        stderr.write(msg)
        stderr.flush()
        return 127, time.monotonic() - start
    except PermissionError:
        msg = f"{command[0]}: permission denied\n".encode()
        log.add(msg)
        stderr.write(msg)
        stderr.flush()
        return 126, time.monotonic() - start
    fwd.child = child
    if fwd.received is not None and fwd.received != signal.SIGINT:  # a signal came while it started
        child.send_signal(fwd.received)
    pumps = [
        threading.Thread(target=_pump, args=(child.stdout, stdout, log), daemon=True),
        threading.Thread(target=_pump, args=(child.stderr, stderr, log), daemon=True),
    ]
    for t in pumps:
        t.start()
    rc = child.wait()
    deadline = time.monotonic() + PIPE_GRACE_SECONDS
    for t in pumps:  # the rest of the output, unless a background process it started keeps the pipe open
        t.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() for t in pumps):
        _note(
            "the command exited but a process it started still holds its output open; not waiting for it "
            "(its further output is not kept)",
            stderr,
        )
    fwd.child = None
    return rc, time.monotonic() - start


def _open_store(db: str | Path | None) -> MemoryStore:
    from ..store import MemoryStore

    return MemoryStore(db)


def run_command(
    opts: RunOptions,
    *,
    db: str | Path | None = None,
    store: Any = None,
    stdout: BinaryIO | None = None,
    stderr: BinaryIO | None = None,
) -> RunReport:
    """Run ``opts.command`` as a learning task; return the report (``exit_code`` is the command's).

    Every option is checked before the command runs: bad options raise
    :class:`~harness_memory.errors.InvalidInputError` and nothing runs or is recorded."""
    from .. import validation as v

    if not isinstance(opts.command, list) or not opts.command or not all(isinstance(c, str) for c in opts.command):
        raise InvalidInputError("give the command to run after --, e.g. harness-memory run --task T -- make test")
    v.ident(opts.task_id, "task")
    v.ident(opts.agent_id, "agent")
    v.ident(opts.namespace, "namespace", optional=True)
    if isinstance(opts.retries, bool) or not isinstance(opts.retries, int) or not 0 <= opts.retries <= 20:
        raise InvalidInputError("retries must be an int from 0 to 20")
    for t in opts.techniques or ():
        v.ident(t, "technique")
    log_limit = BoundedLog(opts.keep_bytes).limit  # checks keep_bytes
    baseline = None
    if opts.baseline_log is not None:
        try:
            baseline = Path(opts.baseline_log).read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            raise InvalidInputError(f"cannot read the baseline log {opts.baseline_log}: {exc.strerror}") from None
    cmdline = shlex.join(opts.command)
    title = opts.title or cmdline[:2000]
    if opts.title is not None:
        v.text(opts.title, "title", max_bytes=2000)
    stdout = stdout or sys.stdout.buffer
    stderr = stderr or sys.stderr.buffer

    report = RunReport(exit_code=0)
    task = {
        "id": opts.task_id,
        "title": title,
        "agent_id": opts.agent_id,
        "namespace": opts.namespace,
        "tags": ["harness-memory-run"],
    }
    own_store = store is None
    opened: dict[str, Any] = {"store": store, "failed": False}

    def get_store() -> Any:
        """The store, opened when first needed (after the first attempt): nothing is held while the
        command runs, and a database that cannot be opened never delays or stops the command."""
        if opened["store"] is None and own_store and not opened["failed"]:
            try:
                opened["store"] = _open_store(db)
            except Exception as exc:  # noqa: BLE001 - the command's result stands without memory
                _note(
                    f"memory unavailable ({type(exc).__name__}: {' '.join(str(exc).split())[:300]}); "
                    "this run is not recorded",
                    stderr,
                )
                opened["failed"], report.memory_ok = True, False
        return opened["store"]

    def remember(what: str, method: str, *args: Any, **kw: Any) -> Any:
        s = get_store()
        if s is None:
            return None
        try:
            return getattr(s, method)(*args, **kw)
        except Exception as exc:  # noqa: BLE001 - never mask the command's own result
            _note(f"could not {what} ({type(exc).__name__}: {' '.join(str(exc).split())[:300]})", stderr)
            report.memory_ok = False
            return None

    tmpdir = tempfile.mkdtemp(prefix="harness-memory-run-")
    advice_file = Path(tmpdir) / "advice.md"
    technique: str | None = None
    last_error: str | None = None
    try:
        with _Forwarder() as fwd:
            for number in range(opts.retries + 1):
                if number and fwd.received is not None:  # a signal came while the last failure was recorded
                    _note(f"{signal.Signals(fwd.received).name} received: not retrying", stderr)
                    break
                env = dict(os.environ)
                env["HARNESS_MEMORY_ATTEMPT"] = str(number + 1)
                env["HARNESS_MEMORY_TASK"] = opts.task_id
                if technique is not None:
                    env["HARNESS_MEMORY_TECHNIQUE"] = technique
                    env["HARNESS_MEMORY_ADVICE_FILE"] = str(advice_file)
                log = BoundedLog(log_limit)
                rc, secs = _spawn(opts.command, env, log, fwd, stdout, stderr)
                status = exit_status(rc)
                att = Attempt(number=number + 1, technique=technique, returncode=status, seconds=secs)
                report.attempts.append(att)
                report.exit_code = status
                if fwd.received is not None:
                    name = signal.Signals(fwd.received).name
                    att.interrupted = name
                    _note(f"interrupted by {name}: exit {status}; recorded, not retried", stderr)
                    remember(
                        "record the interruption",
                        "remember",
                        f"{title}: interrupted by {name} (exit {status}) after {secs:.1f} s",
                        type="failure",
                        agent_id=opts.agent_id,
                        namespace=opts.namespace,
                        task_id=opts.task_id,
                        tags=["harness-memory-run", "interrupted"],
                        importance=0.3,
                        metadata={
                            "interrupted": True,
                            "signal": name,
                            "exit_code": status,
                            "attempt": number + 1,
                            "command": cmdline[:1000],
                        },
                    )
                    break
                if status == 0:
                    result = {
                        "success": True,
                        "technique": technique,
                        "error": last_error,
                        "summary": "passed" + (f" with technique {technique}" if technique else ""),
                    }
                    remember("record the success", "on_task_complete", task, result)
                    if number:
                        _note(
                            f"attempt {number + 1} passed" + (f" with technique {technique}" if technique else ""),
                            stderr,
                        )
                    break
                text = log.text()
                if not text.strip():
                    text = f"command exited with status {status}: {cmdline[:1000]}"
                result = {
                    "success": False,
                    "technique": technique,
                    "error": text,
                    "summary": f"exited with status {status}",
                }
                if technique is not None:  # the technique's outcome first: the next choice must not repeat it
                    remember("record the failure", "on_task_complete", task, result)
                advice = remember(
                    "sign the failure", "on_task_error", task, text, baseline=baseline, techniques=opts.techniques
                )
                if technique is None:  # after the advice, so that "seen before" speaks of earlier runs
                    remember("record the failure", "on_task_complete", task, result)
                last_error = text
                if advice is None:
                    break
                att.signature = advice.signature.id
                _print_advice(advice, status, number + 1, stderr)
                technique = advice.next.technique
                if number == opts.retries:
                    break
                if technique == "escalate":
                    _note("the selector says escalate: not retrying", stderr)
                    break
                advice_file.write_text(advice.prompt + "\n", encoding="utf-8")
                _note(f"retry {number + 1} of {opts.retries} with HARNESS_MEMORY_TECHNIQUE={technique}", stderr)
    finally:
        if own_store and opened["store"] is not None:
            try:
                opened["store"].close()
            except Exception as exc:  # noqa: BLE001 - the command's status matters more
                _note(f"could not close the database ({type(exc).__name__})", stderr)
        try:
            if advice_file.exists():
                advice_file.unlink()
            os.rmdir(tmpdir)
        except OSError:
            pass
    return report


def _print_advice(advice: Any, status: int, number: int, stderr: BinaryIO) -> None:
    """The advice between marker lines; every memory in it is stored (redacted) text, and the
    signature's excerpt is redacted before signing."""
    sig = advice.signature
    lines = [
        f"{MARK} ---- attempt {number} failed (exit {status}) ----",
        f"{MARK} signature {sig.id} ({sig.category}): {sig.template[:300]}",
        f"{MARK} seen before: {'yes' if advice.seen_before else 'no'}",
    ]
    for m in advice.fixes[:3]:
        lines.append(f"{MARK} what fixed it before (#{m.id}): {' '.join(m.content.split())[:300]}")
    for m in advice.failures[:2]:
        lines.append(f"{MARK} did not work (#{m.id}): {' '.join(m.content.split())[:300]}")
    lines.append(f"{MARK} next technique: {advice.next.technique} ({advice.next.reason[:200]})")
    lines.append(f"{MARK} ----")
    stderr.write(("\n".join(lines) + "\n").encode("utf-8", errors="replace"))
    stderr.flush()
