"""Cold start of `harness-memory hook claude-code` and the overhead of `harness-memory run`.

Each figure is the median over --runs fresh processes: wall time, and CPU time (user + system,
from RUSAGE_CHILDREN), which load on a shared machine inflates much less. The store is a new
database with --memories memories in the hook's project namespace.

    .venv/bin/python benchmarks/adapter_overhead.py --runs 9
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def measure(cmd: list[str], runs: int, env: dict, data: bytes | None = None) -> tuple[float, float, bytes]:
    walls, cpus, out = [], [], b""
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        r = subprocess.run(cmd, input=data, capture_output=True, env=env, check=False)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        out = r.stdout
    return statistics.median(walls), statistics.median(cpus), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--memories", type=int, default=200)
    args = ap.parse_args()

    from harness_memory import MemoryStore
    from harness_memory.adapters.claude_code import project_namespace

    work = Path(tempfile.mkdtemp(prefix="hm-adapter-bench-"))
    db = work / "bench.db"
    hm = str(Path(sys.executable).with_name("harness-memory"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_")}
    env["CLAUDE_PROJECT_DIR"] = str(work)
    ns = project_namespace({"cwd": str(work)})
    with MemoryStore(db) as s:
        s.remember_many(
            [
                {
                    "content": f"note {i}: the flaky test {i % 17} needs fixture reset number {i}",
                    "type": "success",
                    "agent_id": "claude-code",
                    "namespace": ns,
                }
                for i in range(args.memories)
            ]
        )
    common = {"session_id": "bench", "transcript_path": "/dev/null", "cwd": str(work), "permission_mode": "default"}
    events = {
        "PreToolUse": dict(
            common, hook_event_name="PreToolUse", tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="t"
        ),
        "PostToolUse (Bash passed)": dict(
            common,
            hook_event_name="PostToolUse",
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool_use_id="t",
            tool_response={"stdout": "a", "stderr": "", "interrupted": False},
        ),
        "UserPromptSubmit": dict(common, hook_event_name="UserPromptSubmit", prompt="fix the flaky test in conftest"),
        "PostToolUseFailure (Bash)": dict(
            common,
            hook_event_name="PostToolUseFailure",
            tool_name="Bash",
            tool_input={"command": "pytest"},
            tool_use_id="t",
            error="Exit code 1\nE   AssertionError: assert 3 == 4",
            is_interrupt=False,
        ),
    }
    rows = [
        ("python -c pass", [sys.executable, "-c", "pass"], None),
        ("import harness_memory", [sys.executable, "-c", "import harness_memory"], None),
        ("import harness_memory.cli", [sys.executable, "-c", "import harness_memory.cli"], None),
    ]
    rows += [
        (f"hook: {name}", [hm, "hook", "claude-code", "--db", str(db), "--budget-ms", "60000"], json.dumps(p).encode())
        for name, p in events.items()
    ]
    rows += [
        ("recall (for comparison)", [hm, "recall", "flaky test", "--db", str(db), "-a", "claude-code", "-n", ns], None),
        ("true", ["true"], None),
        ("run -- true", [hm, "run", "--db", str(db), "--task", "bench-ok", "--", "true"], None),
        (
            "run -- failing sh",
            [hm, "run", "--db", str(db), "--task", "bench-fail", "--", "sh", "-c", "echo 'E: boom' >&2; exit 1"],
            None,
        ),
    ]
    print(f"load average {os.getloadavg()[0]:.1f}; median of {args.runs} runs")
    print(f"{'process':34s} {'CPU':>8s} {'wall':>8s}")
    for name, cmd, data in rows:
        wall, cpu, _ = measure(cmd, args.runs, env, data)
        print(f"{name:34s} {cpu * 1000:6.0f} ms {wall * 1000:6.0f} ms")
    big = ["sh", "-c", "head -c 200000000 /dev/zero | tr '\\0' x | fold -w 100"]
    t = time.perf_counter()
    subprocess.run(big, stdout=subprocess.DEVNULL, check=False)
    direct = time.perf_counter() - t
    t = time.perf_counter()
    subprocess.run(
        [hm, "run", "--db", str(db), "--task", "bench-big", "--", *big], stdout=subprocess.DEVNULL, env=env, check=False
    )
    through = time.perf_counter() - t
    print(f"200 MB of output: {direct:.2f} s directly, {through:.2f} s through run")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
