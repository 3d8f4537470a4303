"""Cold start of the command line: what one ``harness-memory`` call costs, start to exit.

    python benchmarks/cold_start.py --sizes 100 100000 --runs 15

Coding-agent hooks run the command line on every tool use, so each call's whole cost counts:
interpreter start, imports, opening the database (and loading its vector index), the work.
For each store size a store of synthetic harness memories is built (no data set needed), then
each command is run ``--runs`` times as a fresh process; the table gives the median and the
90th percentile of wall time, and the median CPU time (user + system, less sensitive to other
load on the machine). Every command runs in both modes of the command line: ``in-process`` (``HARNESS_MEMORY_CLI_SERVER=0``:
the call imports everything itself) and ``served`` (the default: a warm-start server forks a
ready process for the call; harness_memory/cli_server.py), with ``python -c pass`` (the
interpreter's own start) as the floor measured in the same run. Commands: ``recall`` (human
output and ``--json``), ``--version`` (never served), and the Claude Code hook (``hook claude-code``) with
a ``UserPromptSubmit`` event (it recalls) and a ``PreToolUse`` event (it answers without opening
the store).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import table
from harness_memory import MemoryStore, Settings

MODULES = ["billing", "orders", "auth", "search", "reports", "uploads", "payments", "users", "cache", "queue"]
ERRORS = [
    "TimeoutError: request timed out after {n}s",
    "KeyError: '{w}'",
    "ModuleNotFoundError: No module named '{w}'",
    "AssertionError: expected {n} rows, got {m}",
    "ConnectionRefusedError: [Errno 111] port {n}",
]
FIXES = [
    "pin the dependency",
    "raise the timeout",
    "add the missing key to the fixture",
    "retry with backoff",
    "install the package in the image",
    "split the batch",
]


def build(path: Path, n: int) -> None:
    rnd = random.Random(n)
    with MemoryStore(path, settings=Settings(near_duplicate_threshold=1.0)) as s:
        for start in range(0, n, 1000):
            items = []
            for i in range(start, min(n, start + 1000)):
                mod, fix = rnd.choice(MODULES), rnd.choice(FIXES)
                err = rnd.choice(ERRORS).format(n=rnd.randint(1, 999), m=rnd.randint(0, 9), w=rnd.choice(MODULES))
                items.append(
                    {
                        "content": f"task {i} on the {mod} module failed with {err}: {fix}",
                        "type": rnd.choice(["failure", "success"]),
                        "agent_id": f"agent-{i % 8}",
                        "scope": "global" if i % 4 == 0 else "agent",
                    }
                )
            s.remember_many(items)


def timed(cmd: list[str], stdin: str | None, env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, check=False, timeout=300)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{cmd} exited {p.returncode}: {p.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def stop_servers(runtime: Path) -> None:
    for f in runtime.glob("*.pid"):
        try:
            os.kill(int(f.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 100_000])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    script = Path(sys.executable).parent / "harness-memory"
    exe = [str(script)] if script.exists() else [sys.executable, "-m", "harness_memory"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_")}
    rows = []
    with tempfile.TemporaryDirectory() as d:
        runtime = Path(d) / "runtime"
        runtime.mkdir(mode=0o700)
        modes = {
            "in-process": {**base, "HARNESS_MEMORY_CLI_SERVER": "0"},
            "served": {**base, "HARNESS_MEMORY_CLI_SERVER": "1", "HARNESS_MEMORY_RUNTIME_DIR": str(runtime)},
        }
        try:
            for n in args.sizes:
                db = Path(d) / f"s{n}.db"
                t0 = time.perf_counter()
                build(db, n)
                print(f"built {n} memories in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
                prompt = json.dumps(
                    {
                        "hook_event_name": "UserPromptSubmit",
                        "session_id": "s1",
                        "cwd": d,
                        "prompt": "the billing module times out on large batches",
                    }
                )
                pre = json.dumps(
                    {
                        "hook_event_name": "PreToolUse",
                        "session_id": "s1",
                        "cwd": d,
                        "tool_name": "Bash",
                        "tool_input": {"command": "ls"},
                    }
                )
                cases = [
                    ("python -c pass (floor)", [sys.executable, "-c", "pass"], None),
                    ("--version", exe + ["--version"], None),
                    ("recall", exe + ["recall", "billing timeout", "-a", "agent-1", "--db", str(db)], None),
                    (
                        "recall --json",
                        exe + ["recall", "billing timeout", "-a", "agent-1", "--db", str(db), "--json"],
                        None,
                    ),
                    ("hook: UserPromptSubmit", exe + ["hook", "claude-code", "--db", str(db)], prompt),
                    ("hook: PreToolUse", exe + ["hook", "claude-code", "--db", str(db)], pre),
                ]
                # the served mode's first call starts the server: wait until it answers, then measure
                timed(cases[2][1], None, modes["served"])
                deadline = time.monotonic() + 120
                while not list(runtime.glob("*.sock")) and time.monotonic() < deadline:
                    time.sleep(0.1)
                timed(cases[2][1], None, modes["served"])
                for name, cmd, stdin in cases:
                    p50 = {}
                    for mode, env in modes.items():
                        if name.startswith("python") and mode == "served":
                            continue
                        walls, cpus = [], []
                        for _ in range(args.runs):  # the modes alternate per case: same load for both
                            w, c = timed(cmd, stdin, env)
                            walls.append(w)
                            cpus.append(c)
                        p50[mode] = float(np.median(walls))
                        ratio = p50[mode] / p50["in-process"] if mode == "served" else None
                        rows.append(
                            [
                                n,
                                name,
                                mode,
                                p50[mode],
                                float(np.percentile(walls, 90)),
                                float(np.median(cpus)),
                                "" if ratio is None else f"{ratio:.2f}x",
                            ]
                        )
        finally:
            stop_servers(runtime)
    print(
        table(
            f"Cold start: one command as a fresh process ({args.runs} runs each; seconds). cpu is the calling "
            "process's own (a served call's work runs in the server's child, counted in wall only)",
            ["memories", "command", "mode", "wall p50", "wall p90", "cpu p50", "served / in-process"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
