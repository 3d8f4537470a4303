"""`harness-memory run`: real commands through the real CLI (subprocesses), then the store."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import table_snapshot
from harness_memory import InvalidInputError, MemoryStore
from harness_memory.adapters.run import BoundedLog, RunOptions, run_command

CLI = [sys.executable, "-m", "harness_memory"]
MARK = b"[harness-memory]"


def hm_run(db: Path, *args: str, cwd: Path | None = None, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_")}
    e.update(env or {})
    return subprocess.run(
        [*CLI, "run", "--db", str(db), *args], check=False, capture_output=True, cwd=cwd, env=e, timeout=120, **kw
    )


def marked(stderr: bytes) -> list[str]:
    return [ln.decode() for ln in stderr.splitlines() if ln.startswith(MARK)]


def memories(db: Path, task_id: str | None = None, agent: str = "ci"):
    with MemoryStore(db) as s:
        rows = s.get_by_type("failure", agent_id=agent, limit=100) + s.get_by_type("success", agent_id=agent, limit=100)
    return [m for m in rows if task_id is None or m.task_id == task_id]


def test_failing_pytest_run_is_signed_recorded_and_advised(tmp_path):
    db = tmp_path / "m.db"
    (tmp_path / "test_broken.py").write_text(
        textwrap.dedent("""
        def parse(s):
            return int(s)

        def test_parse():
            assert parse("12x") == 12
    """)
    )
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_broken.py"]
    # without this venv's plugins (schemathesis, hypothesis, xdist...): 0.5 s a pytest run instead of 8
    quick = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    direct = subprocess.run(
        cmd, check=False, capture_output=True, cwd=tmp_path, timeout=120, env={**os.environ, **quick}
    )
    first = hm_run(db, "--task", "unit-tests", "--", *cmd, cwd=tmp_path, env=quick)
    assert first.returncode == direct.returncode == 1
    # pytest's own output passes through (timings aside), and nothing of ours is on stdout
    assert b"ValueError: invalid literal for int() with base 10: '12x'" in first.stdout
    assert MARK not in first.stdout
    lines = marked(first.stderr)
    assert any("seen before: no" in ln for ln in lines), lines
    assert any("ValueError" in ln and "signature err_" in ln for ln in lines), lines
    (fail,) = memories(db, "unit-tests")
    assert fail.type == "failure" and fail.error_signature
    second = hm_run(db, "--task", "unit-tests", "--", *cmd, cwd=tmp_path, env=quick)
    assert second.returncode == 1
    assert any("seen before: yes" in ln for ln in marked(second.stderr))
    assert [m.error_signature for m in memories(db, "unit-tests")] == [fail.error_signature]  # reinforced, one row


def test_failing_compiler_call(tmp_path):
    if shutil.which("gcc") is None:  # the CI machine has gcc; a machine without it cannot run this command
        pytest.fail("gcc is required for this test")
    db = tmp_path / "m.db"
    (tmp_path / "main.c").write_text("int helper(int);\nint main(void) { return helper(2); }\n")
    r = hm_run(db, "--task", "build", "--", "gcc", "-o", str(tmp_path / "main"), str(tmp_path / "main.c"))
    assert r.returncode == 1
    assert b"undefined reference to `helper'" in r.stderr
    lines = marked(r.stderr)
    assert any("undefined reference" in ln and "signature err_" in ln for ln in lines), lines
    with MemoryStore(db) as s:
        sig = s.error_signature("main.c:(.text+0x13): undefined reference to `helper'")
        (fail,) = [m for m in s.get_by_type("failure", agent_id="ci") if m.task_id == "build"]
    assert fail.error_signature == sig.id


def test_output_passes_through_byte_for_byte_and_exit_code_is_kept(tmp_path):
    db = tmp_path / "m.db"
    script = tmp_path / "emit.py"
    script.write_text(
        textwrap.dedent("""
        import sys
        sys.stdout.buffer.write(b"plain\\n\\xff\\xfe not utf-8\\r\\n" + bytes(range(256)) + b"no newline at end")
        sys.stdout.flush()
        sys.stderr.buffer.write(b"warn: \\x1b[31mred\\x1b[0m\\n")
        sys.exit(42)
    """)
    )
    direct = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, timeout=60)
    wrapped = hm_run(db, "--task", "emit", "--", sys.executable, str(script))
    assert wrapped.returncode == direct.returncode == 42
    assert wrapped.stdout == direct.stdout
    assert wrapped.stderr.startswith(direct.stderr)
    ok = hm_run(db, "--task", "ok", "--", sys.executable, "-c", "print('fine')")
    assert ok.returncode == 0 and ok.stdout == b"fine\n" and ok.stderr == b""
    (success,) = [m for m in memories(db, "ok")]
    assert success.type == "success"


def test_command_killed_by_a_signal(tmp_path):
    db = tmp_path / "m.db"
    r = hm_run(db, "--task", "killed", "--", "sh", "-c", "echo about to die; kill -KILL $$")
    assert r.returncode == 128 + signal.SIGKILL
    assert r.stdout == b"about to die\n"
    assert any("exit 137" in ln for ln in marked(r.stderr))
    (fail,) = memories(db, "killed")
    assert fail.type == "failure" and "137" in fail.content


def test_missing_command_exits_127_like_a_shell(tmp_path):
    r = hm_run(tmp_path / "m.db", "--task", "t", "--", "no-such-command-xyz")
    assert r.returncode == 127
    assert b"no-such-command-xyz: command not found" in r.stderr


CHILD = textwrap.dedent("""
    import signal, sys, time
    def stop(signum, frame):
        print(f"child got {signum}", flush=True)
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, stop)
    print("ready", flush=True)
    time.sleep(60)
""")


@pytest.mark.parametrize("sig, expected", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_reaches_the_child_and_is_recorded_as_interrupted(tmp_path, sig, expected):
    db = tmp_path / "m.db"
    e = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_")}
    proc = subprocess.Popen(
        [*CLI, "run", "--db", str(db), "--task", "long", "--retries", "3", "--", sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=e,
    )
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(sig)  # to the wrapper only, as a CI runner's cancel does
    out, err = proc.communicate(timeout=60)
    # SIGTERM: the child's handler ran; SIGINT: Python's KeyboardInterrupt killed it by SIGINT
    assert proc.returncode == expected
    if sig == signal.SIGTERM:
        assert out == b"child got 15\n"
    else:
        assert b"KeyboardInterrupt" in err
    assert any(f"interrupted by {sig.name}" in ln for ln in marked(err))
    (m,) = memories(db, "long")
    assert m.metadata["interrupted"] is True and m.metadata["signal"] == sig.name
    assert m.metadata["exit_code"] == expected and m.metadata["attempt"] == 1  # not retried


def test_retries_expose_technique_and_advice_to_the_command(tmp_path):
    db = tmp_path / "m.db"
    script = tmp_path / "flaky.sh"
    script.write_text(
        textwrap.dedent("""\
        if [ -z "$HARNESS_MEMORY_TECHNIQUE" ]; then
            echo "error: connection refused to registry.local:5000" >&2
            exit 4
        fi
        echo "attempt $HARNESS_MEMORY_ATTEMPT technique $HARNESS_MEMORY_TECHNIQUE"
        grep -c "Error signature" "$HARNESS_MEMORY_ADVICE_FILE"
    """)
    )
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = hm_run(db, "--task", "deploy-1", "--retries", "2", "--", "sh", str(script), env={"TMPDIR": str(tmp)})
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"attempt 2 technique prompt_restructure\n1\n"
    with MemoryStore(db) as s:
        (attempt,) = s.task_attempts("deploy-1")
    assert (attempt.technique, attempt.result) == ("prompt_restructure", "fixed")
    assert list(tmp.iterdir()) == []  # the advice file and its folder are removed


def test_broken_database_never_masks_the_command(tmp_path):
    bad = tmp_path / "not-a-db"
    bad.write_bytes(b"this is not sqlite" * 100)
    r = hm_run(bad, "--task", "t", "--", "sh", "-c", "echo still runs; exit 5")
    assert r.returncode == 5 and r.stdout == b"still runs\n"
    assert any("memory unavailable (DatabaseOpenError" in ln for ln in marked(r.stderr))
    assert bad.read_bytes() == b"this is not sqlite" * 100


def test_bad_options_run_nothing_and_change_nothing(tmp_path, store):
    marker = tmp_path / "ran"
    before = table_snapshot(store)
    for opts in [
        RunOptions(task_id="bad\nid", command=["touch", str(marker)]),
        RunOptions(task_id="t", command=[]),
        RunOptions(task_id="t", command=["touch", str(marker)], retries=-1),
        RunOptions(task_id="t", command=["touch", str(marker)], keep_bytes=10),
        RunOptions(task_id="t", command=["touch", str(marker)], techniques=[""]),
        RunOptions(task_id="t", command=["touch", str(marker)], baseline_log=str(tmp_path / "missing")),
    ]:
        with pytest.raises(InvalidInputError):
            run_command(opts, store=store)
    assert not marker.exists()
    assert table_snapshot(store) == before
    r = hm_run(tmp_path / "cli.db", "--task", "t", "--retries", "-1", "--", "touch", str(marker))
    assert r.returncode == 2 and not marker.exists()
    r = hm_run(tmp_path / "cli.db", "--task", "t")
    assert r.returncode == 2 and b"give the command to run after --" in r.stderr


def test_no_secret_in_advice_or_store(tmp_path):
    db = tmp_path / "m.db"
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    cmd = [
        "sh",
        "-c",
        f"echo 'fatal: Authentication failed with token {secret} for https://u:{secret}@git.example/x' >&2; exit 128",
    ]
    for _ in range(2):
        r = hm_run(db, "--task", "clone", "--", *cmd)
        assert r.returncode == 128
        assert secret.encode() in r.stderr  # the command's own output is passed through untouched
        assert not [ln for ln in marked(r.stderr) if secret in ln]
    for f in tmp_path.glob("m.db*"):
        assert secret.encode() not in f.read_bytes()


def test_bounded_log_keeps_head_and_tail():
    log = BoundedLog(4096)
    for i in range(2000):
        log.add(f"line {i}\n".encode())
    text = log.text()
    assert text.startswith("line 0\n") and text.endswith("line 1999\n")
    assert "bytes left out by harness-memory" in text and len(text) < 4096 + 100
    small = BoundedLog(4096)
    small.add(b"abc")
    assert small.data() == b"abc"


def test_huge_output_is_signed_by_its_end(tmp_path):
    db = tmp_path / "m.db"
    code = (
        "import sys\nfor i in range(200000): print(f'progress {i} ok')\n"
        "print('ERROR: linker failed: cannot find -lfoo', file=sys.stderr)\nsys.exit(2)"
    )
    t = time.monotonic()
    r = hm_run(db, "--task", "big", "--keep-bytes", "65536", "--", sys.executable, "-c", code)
    assert time.monotonic() - t < 60
    assert r.returncode == 2 and r.stdout.count(b"\n") == 200000
    assert any("cannot find -lfoo" in ln for ln in marked(r.stderr) if "signature" in ln)


def test_baseline_log_keeps_known_noise_out_of_the_signature(tmp_path):
    db = tmp_path / "m.db"
    noise = "error: cache server unreachable, continuing without cache"
    base = tmp_path / "passing.log"
    base.write_text(f"step 1\n{noise}\nbuilding...\nall good\n")
    script = f"echo 'step 1'; echo '{noise}'; echo 'building...'; echo 'ERROR: test_login failed: expected 200 got 500'; exit 1"
    plain = hm_run(db, "--task", "a", "--", "sh", "-c", script)
    with_base = hm_run(db, "--task", "b", "--baseline-log", str(base), "--", "sh", "-c", script)
    assert plain.returncode == with_base.returncode == 1
    assert any("cache server unreachable" in ln for ln in marked(plain.stderr) if "signature" in ln)
    sig_lines = [ln for ln in marked(with_base.stderr) if "signature" in ln]
    assert len(sig_lines) == 1, with_base.stderr.decode()
    sig_line = sig_lines[0]
    assert "test_login failed" in sig_line and "cache server" not in sig_line


def test_a_background_process_holding_the_output_does_not_hang_the_run(tmp_path):
    t = time.monotonic()
    r = hm_run(tmp_path / "m.db", "--task", "bg", "--", "sh", "-c", "sleep 30 & echo started; exit 3")
    assert time.monotonic() - t < 25
    assert r.returncode == 3 and r.stdout.startswith(b"started\n")
    assert any("still holds its output open" in ln for ln in marked(r.stderr))


def test_run_and_hook_on_a_postgresql_url_from_the_environment(tmp_path):
    """CI unchanged on a fleet database: HARNESS_MEMORY_DB is a PostgreSQL URL (a real server)."""
    from pgtestdb import drop_schema, new_schema

    url, schema = new_schema()
    try:
        e = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_")}
        e["HARNESS_MEMORY_DB"] = url
        cmd = [sys.executable, "-c", "import json; json.loads('{broken')"]
        for seen in ("no", "yes"):
            r = subprocess.run(
                [*CLI, "run", "--task", "parse-config", "--", *cmd],
                check=False,
                capture_output=True,
                env=e,
                timeout=120,
            )
            assert r.returncode == 1
            assert any(f"seen before: {seen}" in ln for ln in marked(r.stderr)), r.stderr
        with MemoryStore(url) as s:
            (fail,) = [m for m in s.get_by_type("failure", agent_id="ci", limit=10) if m.task_id == "parse-config"]
            assert "JSONDecodeError" in (fail.error_template or fail.content)
    finally:
        drop_schema(schema)
