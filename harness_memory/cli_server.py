"""The command line's warm start: a per-user background server that forks a ready process per call.

A ``harness-memory`` call spends most of its time importing (pydantic, numpy, the store): about
0.8 s of CPU before any work, on every call. Coding-agent hooks call the command line on every
tool use, so that cost is paid again and again. This module is the ``harness-memory`` entry
point; it imports nothing heavy and, for the short commands in :data:`FAST_COMMANDS`:

1. connects to a server on a Unix socket in a private runtime folder (mode 0700, owned by the
   user; the server also checks the peer's uid) and hands it the call: its arguments, its
   environment, its working folder, and its own stdin, stdout and stderr as file descriptors
   (``SCM_RIGHTS``);
2. the server, which has imported everything once, forks; the child takes the caller's file
   descriptors, environment and folder, runs the command exactly as an in-process call would
   (output streams to the caller's terminal or pipe, ``isatty`` is the caller's), and sends back
   its exit status, which the caller exits with. Ctrl-C and SIGTERM/SIGHUP of the caller are
   forwarded to the child;
3. when no server answers, the call runs in-process as before, and starts a server in the
   background for the next call (one per user, Python and version of this code: its socket's
   name carries a hash of the code, so an upgrade or an edit starts a new one). A server exits
   after ``HARNESS_MEMORY_CLI_SERVER_IDLE`` seconds without a call (default 600).

Each call is its own forked process, so nothing leaks from one call to the next; the server
itself never opens a database. ``HARNESS_MEMORY_CLI_SERVER=0`` turns all of this off (every
call in-process, no server started); only Linux has it (it needs ``SO_PEERCRED``).
``harness-memory cli-server status|stop`` shows or stops the server.
"""

from __future__ import annotations

import io
import os
import sys
from typing import NoReturn, cast

__all__ = ["FAST_COMMANDS", "main", "manage", "serve", "socket_path"]

#: Short commands a server runs; the rest (servers, watchers, ``run``, maintenance, exports) run in-process.
FAST_COMMANDS = frozenset(
    {
        "apply",
        "forget",
        "has-seen",
        "hook",
        "log-tool-call",
        "outcome",
        "recall",
        "remember",
        "select-technique",
        "show",
        "signature",
        "stats",
        "tool-calls",
    }
)
_DEFAULT_IDLE = 600.0
_MAX_HEADER = 1 << 24


def _enabled() -> bool:
    return sys.platform.startswith("linux") and os.environ.get(
        "HARNESS_MEMORY_CLI_SERVER", "1"
    ).strip().lower() not in ("0", "off", "false", "no")


def _runtime_dir() -> str | None:
    """The user's private folder for the socket, made if missing; None when it is not private."""
    base = os.environ.get("HARNESS_MEMORY_RUNTIME_DIR")
    if not base:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        base = (
            os.path.join(xdg, "harness-memory")
            if xdg and os.path.isdir(xdg)
            else os.path.join(os.environ.get("TMPDIR") or "/tmp", f"harness-memory-{os.getuid()}")
        )
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.lstat(base)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # a folder others can write to (or a symlink) is never used for the socket
    return base


def _code_key() -> str:
    """A hash of this interpreter and of the package's source files (names, sizes, mtimes)."""
    import hashlib

    root = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha1(f"{sys.executable}\0{sys.version}\0{root}".encode())
    stack = [root]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in sorted(it, key=lambda e: e.name):
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        stack.append(e.path)
                elif e.name.endswith((".py", ".sql")):
                    st = e.stat()
                    h.update(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def socket_path() -> str | None:
    """Where this code's server listens (None when the runtime folder is not usable)."""
    d = _runtime_dir()
    if d is None:
        return None
    path = os.path.join(d, f"cli-{_code_key()}.sock")
    return path if len(os.fsencode(path)) < 108 else None  # AF_UNIX paths are short: in-process then


def _command_of(argv: list[str]) -> str | None:
    return argv[0] if argv and not argv[0].startswith("-") else None


# -- the caller -------------------------------------------------------------------------------


def _recv_exact(sock, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        buf += chunk
    return buf


def _call_server(path: str, argv: list[str]) -> int | None:
    """Run the call in a server; None when no server took it (then nothing was run)."""
    import json
    import signal
    import socket

    # our signals are the command's signals: one that comes while the server is still starting the
    # command (before its pid is known) is held and forwarded once it is, never lost in between
    received: list[int] = []
    command: list[int] = []

    def forward(signum, _frame):
        received.append(signum)
        if command:
            try:
                os.kill(command[0], signum)
            except ProcessLookupError:
                pass

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        header = json.dumps({"argv": argv, "prog": _prog_name(), "env": dict(os.environ), "cwd": os.getcwd()}).encode()
        socket.send_fds(sock, [len(header).to_bytes(4, "big") + header], [0, 1, 2])
        pid = int.from_bytes(_recv_exact(sock, 4), "big")
    except (OSError, ConnectionError):
        sock.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
        if received:  # nothing ran: the signal is this process's own, as it would have been without a server
            os.kill(os.getpid(), received[-1])
        return None
    # from here on the command runs: its exit status is ours
    command.append(pid)
    for signum in received:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
    try:
        status = int.from_bytes(_recv_exact(sock, 4), "big", signed=True)
    except ConnectionError:
        status = 128 + received[-1] if received else 1  # it died without a word: killed
    finally:
        sock.close()
    if received and status == 128 + received[-1]:
        # it ended on the signal we forwarded: end the same way, as the command itself would have
        signal.signal(received[-1], signal.SIG_DFL)
        os.kill(os.getpid(), received[-1])
    return status


def _spawn_server(path: str) -> None:
    """Start a server for the next call, unless one is starting or running (its lock is held)."""
    import fcntl
    import subprocess

    try:
        fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return  # a server holds it
    os.close(fd)  # released: the server takes it itself
    subprocess.Popen(
        [sys.executable, "-m", "harness_memory.cli_server", "--serve", path],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        cwd="/",
    )


def _prog_name() -> str:
    """What usage lines call this program (click's rule: ``python -m pkg`` when run with -m)."""
    main_module = sys.modules.get("__main__")
    spec = getattr(main_module, "__spec__", None)
    if getattr(main_module, "__package__", None) and spec is not None:
        name = spec.name[: -len(".__main__")] if spec.name.endswith(".__main__") else spec.name
        return f"python -m {name}"
    return os.path.basename(sys.argv[0])


def _in_process(argv: list[str], prog_name: str | None = None) -> None:
    from .cli import main as cli_main

    sys.argv = [sys.argv[0], *argv]
    cli_main(prog_name=prog_name or _prog_name())


def main() -> None:
    """The ``harness-memory`` command."""
    argv = sys.argv[1:]
    if _command_of(argv) == "cli-server":
        sys.exit(manage(argv[1:]))
    path = socket_path() if _enabled() and _command_of(argv) in FAST_COMMANDS else None
    if path is not None:
        status = _call_server(path, argv)
        if status is not None:
            sys.exit(status)
        _spawn_server(path)
    _in_process(argv)


# -- the server -------------------------------------------------------------------------------


def _status_path_pid(path: str) -> int | None:
    try:
        with open(path + ".pid") as f:
            return int(f.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


def manage(args: list[str]) -> int:
    """``harness-memory cli-server status|stop``."""
    what = args[0] if args else "status"
    if what in ("-h", "--help") or what not in ("status", "stop"):
        print(
            "usage: harness-memory cli-server [status|stop]\n\n"
            "The background server that makes short commands start fast (docs/configuration.md).",
            file=sys.stdout if what in ("-h", "--help") else sys.stderr,
        )
        return 0 if what in ("-h", "--help") else 2
    path = socket_path()
    pid = _status_path_pid(path) if path else None
    alive = False
    if pid is not None:
        try:
            os.kill(pid, 0)
            alive = True
        except OSError:
            alive = False
    if what == "status":
        if not _enabled():
            print("cli server: off (HARNESS_MEMORY_CLI_SERVER=0, or not Linux)")
        print(
            f"cli server: {'running, pid ' + str(pid) if alive else 'not running'} ({path or 'no private runtime folder'})"
        )
        return 0
    if alive and pid is not None:
        import signal

        os.kill(pid, signal.SIGTERM)
        print(f"stopped the cli server (pid {pid})")
    else:
        print("no cli server running")
    return 0


def _peer_uid(conn) -> int:
    import socket
    import struct

    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _child(conn, header: dict, fds: list[int]) -> None:
    """In the forked child: become the caller's process and run its command."""
    import signal

    def ended_by(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, ended_by)  # the caller forwards its signals: tell it how we ended
    signal.signal(signal.SIGHUP, ended_by)
    status = 1
    hard_exit = os._exit

    def report_and_exit(status: int) -> NoReturn:
        # a command that ends with os._exit (the hook does, to abandon a slow call) still tells the
        # caller its status; this process is the call's own, so patching os here touches nothing else
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            conn.sendall(int(status).to_bytes(4, "big", signed=True))
        except (OSError, ValueError):
            pass
        hard_exit(status)

    os._exit = report_and_exit
    try:
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(header["env"])
        os.chdir(header["cwd"])
        for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
            cast(io.TextIOWrapper, stream).reconfigure(
                line_buffering=os.isatty(fd)
            )  # the caller's terminal, or its pipe
        conn.sendall(os.getpid().to_bytes(4, "big"))
        try:
            _in_process(list(header["argv"]), str(header.get("prog") or "harness-memory"))
            status = 0
        except SystemExit as exc:
            code = exc.code
            status = code if isinstance(code, int) else (0 if code is None else 1)
            if code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)
        except KeyboardInterrupt:
            status = 130
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            status = status or 1
        try:
            conn.sendall(int(status).to_bytes(4, "big", signed=True))
        except OSError:
            pass  # the caller is gone: nobody to tell
        hard_exit(status & 0xFF)


#: What the short commands import as they run (found by listing a served call's new modules):
#: imported once here, a forked child finds them loaded instead of importing them on every call.
_WARM_MODULES = (
    "harness_memory.cli",
    "harness_memory.store",
    "harness_memory.adapters.claude_code",
    "harness_memory.recall",
    "harness_memory.writes",
    "harness_memory.ledger",
    "harness_memory.fixes",
    "harness_memory.tool_calls",
    "harness_memory.settings",
    "harness_memory.sqlite_backend",
    "harness_memory.embedders",
    "harness_memory.episodes",
    "harness_memory.summarisers",
    "harness_memory.lifecycle",
    "harness_memory.jobs.decay",
    "numpy.ma",
    "mmap",
    "urllib.request",
    "typer._adapters",
    "rich.console",
    "rich.markup",
    "rich.table",
    "rich.progress",
)


def _warm() -> None:
    """Import what the commands need and build the click command, then freeze the heap, so that a
    forked child starts ready and shares those pages instead of copying them."""
    import gc
    import importlib
    import io

    for name in _WARM_MODULES:
        importlib.import_module(name)
    from . import cli

    cli.click_command()
    from rich.console import Console
    from rich.table import Table

    table = Table("a", "b")  # rich loads its box, cell-width and style tables on first render
    table.add_row("x", "y")
    Console(file=io.StringIO(), width=80).print(table)
    gc.collect()
    gc.freeze()  # the warm objects are never collected (and so never written to) in a child


def serve(path: str, idle: float | None = None) -> None:
    """Serve calls on ``path`` until ``idle`` seconds pass without one."""
    import fcntl
    import json
    import signal
    import socket

    if idle is None:
        try:
            idle = float(os.environ.get("HARNESS_MEMORY_CLI_SERVER_IDLE", _DEFAULT_IDLE))
        except ValueError:
            idle = _DEFAULT_IDLE
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server has it
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # no thread pools in a process that forks
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _warm()

    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        srv.bind(path)
    finally:
        os.umask(old)
    srv.listen(64)
    with open(path + ".pid", "w") as f:
        f.write(str(os.getpid()))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    srv.settimeout(min(idle, 5.0))
    uid = os.getuid()
    last = _now()
    try:
        while not stop and _now() - last < idle:
            try:
                conn, _ = srv.accept()
            except (TimeoutError, InterruptedError):
                continue
            last = _now()
            fds: list[int] = []
            try:
                conn.settimeout(5.0)
                if _peer_uid(conn) != uid:
                    continue
                msg, fds, _flags, _addr = socket.recv_fds(conn, 4 + 65536, 3)
                size = int.from_bytes(msg[:4], "big")
                if len(fds) != 3 or size > _MAX_HEADER:
                    continue
                body = msg[4:]
                while len(body) < size:
                    chunk = conn.recv(min(1 << 20, size - len(body)))
                    if not chunk:
                        break
                    body += chunk
                header = json.loads(body)
                conn.settimeout(None)
                if os.fork() == 0:
                    srv.close()
                    _child(conn, header, fds)
            except (OSError, ValueError, KeyError):
                pass  # a broken or foreign call: the caller runs the command itself
            finally:
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                conn.close()  # type: ignore[possibly-undefined]  # accept() bound it: its failures `continue`
    finally:
        try:
            if os.path.exists(path + ".pid") and _status_path_pid(path) == os.getpid():
                os.unlink(path + ".pid")
            os.unlink(path)
        except OSError:
            pass
        srv.close()
        os.close(lock)


def _now() -> float:
    import time

    return time.monotonic()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(sys.argv[2])
    else:
        main()
