"""The command line's warm-start server (harness_memory/cli_server.py), through real processes: a
served call behaves exactly as the same call in-process (output, errors, exit status, stdin, the
caller's folder and environment), runs in a child of the server, forwards signals, refuses a
runtime folder others can write to, and the server goes away when idle or told to."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "harness_memory"]
TRACEBACK = (
    'Traceback (most recent call last):\n  File "/srv/app/main.py", line 4, in <module>\n'
    "    import yaml\nModuleNotFoundError: No module named 'yaml'\n"
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the warm-start server is Linux-only")


@pytest.fixture
def runtime():
    d = Path(tempfile.mkdtemp(prefix="hm-", dir="/tmp"))  # short: a socket's path has at most 107 bytes
    yield d
    for pid in _server_pids(d):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    shutil.rmtree(d, ignore_errors=True)


def _server_pids(runtime: Path) -> list[int]:
    pids = []
    for f in runtime.glob("*.pid"):
        try:
            pid = int(f.read_text().strip())
            os.kill(pid, 0)
        except (OSError, ValueError):
            continue
        pids.append(pid)
    return pids


def _alive(pid: int) -> bool:
    """Running (an exited server whose parent is gone may stay a zombie where nothing reaps it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def env_of(runtime: Path, *, on: bool, **extra: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_")}
    e.update(
        HARNESS_MEMORY_RUNTIME_DIR=str(runtime),
        HARNESS_MEMORY_CLI_SERVER="1" if on else "0",
        NO_COLOR="1",
        COLUMNS="120",
        **extra,
    )
    return e


def cli(args: list[str], env: dict[str, str], *, cwd: Path, stdin: str | None = None):
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=180, check=False
    )


def wait_for_server(runtime: Path) -> int:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pids = _server_pids(runtime)
        if pids and list(runtime.glob("*.sock")):
            return pids[0]
        time.sleep(0.1)
    raise AssertionError(f"no server came up in {runtime}: {sorted(p.name for p in runtime.iterdir())}")


def children_of(pid: int) -> list[int]:
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def start_served(server: int, args: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen, set[int]]:
    """Start a call whose stdin stays open; the server's new children once the call runs in one."""
    before = set(children_of(server))
    p = subprocess.Popen(
        [*CLI, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    deadline = time.monotonic() + 60
    while not (kids := set(children_of(server)) - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    return p, kids


@pytest.fixture
def project(tmp_path, runtime):
    off = env_of(runtime, on=False)
    for args in (
        ["init", "--db", "m.db"],
        [
            "remember",
            "pytest failed: ModuleNotFoundError: No module named 'yaml'; fixed with pip install pyyaml",
            "-t",
            "failure",
            "-a",
            "build",
            "--db",
            "m.db",
        ],
        ["remember", "use pip install -e . before running pytest", "-t", "success", "-a", "build", "--db", "m.db"],
    ):
        r = cli(args, off, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    return tmp_path


def test_a_served_call_is_the_same_call(project, runtime):
    calls = [
        (["recall", "pytest yaml", "-a", "build", "--db", "m.db"], None, {}),  # a relative --db: the caller's folder
        (["recall", "pytest yaml", "-a", "build"], None, {"HARNESS_MEMORY_DB": str(project / "m.db")}),  # its env
        (["recall", "kubernetes ingress", "-a", "nobody", "--db", "m.db", "--json"], None, {}),
        (["signature", "-", "--db", "m.db", "--json"], TRACEBACK, {}),  # its stdin
        (["show", "999", "--db", "m.db"], None, {}),  # an error: message and status
        (["show", "999", "--db", "m.db", "--json"], None, {}),
        (["recall", "x", "--db", "missing.db"], None, {}),  # a refused database
        (["has-seen", "--db", "m.db"], None, {}),  # a usage error (click's own exit 2 and program name)
        (["recall", "--limit", "nope", "x", "--db", "m.db"], None, {}),
    ]
    expected = [cli(a, env_of(runtime, on=False, **e), cwd=project, stdin=s) for a, s, e in calls]
    cli(["recall", "warm up", "--db", "m.db"], env_of(runtime, on=True), cwd=project)
    server = wait_for_server(runtime)
    for (args, stdin, extra), want in zip(calls, expected):
        got = cli(args, env_of(runtime, on=True, **extra), cwd=project, stdin=stdin)
        assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr), args
    assert _server_pids(runtime) == [server]  # one server served them all
    assert {want.returncode for want in expected} == {0, 2}
    assert "No module named" in json.dumps(json.loads(expected[3].stdout))


def test_a_served_call_runs_in_a_child_of_the_server_with_the_callers_stdin(project, runtime):
    on = env_of(runtime, on=True, CLAUDE_PROJECT_DIR=str(project))
    cli(["recall", "warm up", "--db", "m.db"], on, cwd=project)
    server = wait_for_server(runtime)
    p, kids = start_served(server, ["hook", "claude-code", "--db", "m.db"], on, project)
    assert kids, "the call did not run in a child of the server"
    payload = {
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    out, err = p.communicate(json.dumps(payload).encode(), timeout=120)
    assert p.returncode == 0, err
    assert json.loads(out) == {}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_callers_signal_ends_the_served_command_the_same_way(project, runtime, sig):
    on = env_of(runtime, on=True)
    cli(["recall", "warm up", "--db", "m.db"], on, cwd=project)
    server = wait_for_server(runtime)
    # `signature -` waits on its stdin, which stays open: the command is running when the signal comes
    p, kids = start_served(server, ["signature", "-", "--db", "m.db"], on, project)
    assert kids
    p.send_signal(sig)
    p.communicate(timeout=120)
    assert p.returncode == -sig  # ended by the signal, as an in-process call is
    deadline = time.monotonic() + 60
    while set(children_of(server)) & kids and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not set(children_of(server)) & kids, "the served command outlived its caller's signal"


def test_a_runtime_folder_others_can_write_to_is_never_used(project, runtime):
    on = env_of(runtime, on=True)
    runtime.chmod(0o777)
    r = cli(["recall", "pytest yaml", "-a", "build", "--db", "m.db"], on, cwd=project)
    assert r.returncode == 0 and "pytest" in r.stdout
    time.sleep(1.0)
    assert list(runtime.iterdir()) == []  # no socket, no lock, no server
    runtime.chmod(0o700)  # the same folder, private: used
    cli(["recall", "pytest yaml", "-a", "build", "--db", "m.db"], on, cwd=project)
    wait_for_server(runtime)


def test_off_means_no_server(project, runtime):
    r = cli(["recall", "pytest yaml", "-a", "build", "--db", "m.db"], env_of(runtime, on=False), cwd=project)
    assert r.returncode == 0 and "pytest" in r.stdout
    time.sleep(1.0)
    assert list(runtime.iterdir()) == []


def test_an_idle_server_exits_and_status_and_stop_say_so(project, runtime):
    on = env_of(runtime, on=True, HARNESS_MEMORY_CLI_SERVER_IDLE="5")
    # the call starts the server and runs itself meanwhile: on a loaded machine the server may be ready,
    # idle for 5 s and gone before the call returns, so look for it while the call runs
    call = subprocess.Popen(
        [*CLI, "recall", "warm up", "--db", "m.db"],
        env=on,
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        server = wait_for_server(runtime)
        assert call.wait(timeout=180) == 0, call.stderr.read() if call.stderr else ""
    finally:
        if call.poll() is None:
            call.kill()
        call.wait()
        if call.stderr:
            call.stderr.close()
    deadline = time.monotonic() + 120
    while (_server_pids(runtime) or _alive(server)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _server_pids(runtime) and not list(runtime.glob("*.sock"))
    assert not _alive(server)

    on = env_of(runtime, on=True)
    cli(["recall", "warm up", "--db", "m.db"], on, cwd=project)
    server = wait_for_server(runtime)
    status = cli(["cli-server", "status"], on, cwd=project)
    assert f"running, pid {server}" in status.stdout
    stop = cli(["cli-server", "stop"], on, cwd=project)
    assert f"pid {server}" in stop.stdout
    deadline = time.monotonic() + 60
    while _server_pids(runtime) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "not running" in cli(["cli-server", "status"], on, cwd=project).stdout


def test_a_signal_that_comes_while_the_server_starts_the_command_still_reaches_it(tmp_path, runtime):
    """The caller is signalled after it handed the call over and before the server answered with
    the command's pid: the signal is held and forwarded once the pid comes, and the caller then ends
    the way the command did. A stand-in server (a real socket and a real child process) holds the
    answer back until the signal has been sent, which makes that window certain."""
    import socket
    import threading

    on = env_of(runtime, on=True)
    path = subprocess.run(
        [sys.executable, "-c", "from harness_memory.cli_server import socket_path; print(socket_path())"],
        env=on,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    listener.settimeout(120)
    got_call = threading.Event()
    signalled = threading.Event()
    outcome: dict[str, object] = {}

    def stand_in() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(120)
            msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
            for fd in fds:
                os.close(fd)
            outcome["argv"] = json.loads(msg[4:])["argv"]
            got_call.set()
            assert signalled.wait(120)
            time.sleep(0.3)  # the signal has landed in the caller, which still waits for the pid
            # the command's SIGINT disposition is the default from its first instruction, as a foreground
            # shell's child has: a test run started in the background ignores SIGINT, an ignored
            # disposition is inherited across exec, and the forwarded signal may come during start-up
            command = subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(120)"],
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            )
            conn.sendall(command.pid.to_bytes(4, "big"))
            try:
                command.wait(timeout=60)
            except subprocess.TimeoutExpired:
                command.kill()
                command.wait()
            outcome["command_returncode"] = command.returncode
            status = 128 - command.returncode if command.returncode < 0 else command.returncode
            conn.sendall(int(status).to_bytes(4, "big", signed=True))

    t = threading.Thread(target=stand_in, daemon=True)
    t.start()
    caller = subprocess.Popen(
        [*CLI, "signature", "-", "--db", "m.db"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=on,
        cwd=tmp_path,
    )
    try:
        assert got_call.wait(120), "the caller never handed its call to the stand-in server"
        caller.send_signal(signal.SIGINT)
        signalled.set()
        caller.communicate(timeout=120)
        t.join(120)
    finally:
        listener.close()
        if caller.poll() is None:
            caller.kill()
    assert outcome["argv"] == ["signature", "-", "--db", "m.db"]
    assert outcome["command_returncode"] == -signal.SIGINT, "the command never got the caller's signal"
    assert caller.returncode == -signal.SIGINT
