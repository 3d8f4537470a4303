"""A runnable harness loop with a scripted fake agent (no LLM): the retry rate falls as the
memory learns which technique fixes which error.

    python examples/harness_loop.py [--tasks 120] [--seed 0] [--db PATH]

Each task hits one of five kinds of error (real-looking error text with varying details).
For each kind one technique works (90% of the time) and the others do not; the harness does
not know which. On every failure it asks the memory for advice (`on_task_error`), retries with
the suggested technique, and reports the outcome (`on_task_complete`), so later tasks with
the same kind of error are fixed sooner.

The same tasks and errors are also run, in the same process, by two reference policies, so
the learning can be judged per window of 20 tasks:

* **fixed ladder**: what a harness without memory does: the techniques in a fixed order,
  starting over at the top for every task;
* **best possible**: an oracle that knows which technique fixes each kind of error and retries
  it until it works (1/0.9 = 1.11 retries per task on average).

A task ends when it is fixed or when the policy escalates (the learning selector escalates when
nothing it has not tried yet looks worth it; the ladder after 8 retries).
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from harness_memory import MemoryStore

TECHNIQUES = ["prompt_restructure", "decomposition", "fresh_start", "add_context", "escalate"]
LADDER = TECHNIQUES[:-1]
KINDS = [
    ("ModuleNotFoundError: No module named '{w}'", "add_context"),
    ("TimeoutError: request to https://api.internal/{w} timed out after {n}s", "decomposition"),
    ("openai.BadRequestError: This model's maximum context length is 8192 tokens, you requested {n}", "fresh_start"),
    ("AssertionError: expected {n} rows in {w}, got {m}", "prompt_restructure"),
    ("TypeError: unsupported operand type(s) for +: 'int' and '{w}'", "add_context"),
]
WORDS = ["requests", "orders", "users", "billing", "tenacity", "pydantic", "invoices", "str", "NoneType"]
WINDOW = 20
MAX_LADDER_RETRIES = 8


def tasks(n_tasks: int, seed: int) -> list[tuple[dict, str, str]]:
    """The task stream: (task, its first error, the technique that fixes that kind of error)."""
    rng = random.Random(seed)
    out = []
    for i in range(n_tasks):
        template, works = rng.choice(KINDS)
        task = {"id": f"loop-{seed}-{i}", "title": f"task {i}: update the {rng.choice(WORDS)} module",
                "agent_id": "fake-agent", "namespace": "harness-loop", "category": "feature"}
        error = template.format(w=rng.choice(WORDS), n=rng.randint(2, 9000), m=rng.randint(0, 5))
        out.append((task, error, works))
    return out


def learning(store: MemoryStore, stream, seed: int) -> list[tuple[int, bool]]:
    """(retries, fixed) per task with the memory choosing each retry."""
    rng = random.Random(seed + 1)
    out = []
    for task, error, works in stream:
        ctx = store.on_task_start(task)
        retries, fixed = 0, False  # the first attempt failed with `error`
        while not fixed:
            advice = store.on_task_error(task, error, techniques=TECHNIQUES, seed=rng.randrange(1 << 30))
            technique = advice.next.technique
            if technique == "escalate":
                store.on_task_complete(task, {"success": False, "technique": "escalate", "error": error,
                                              "summary": "escalated to a human"}, context=ctx)
                break
            retries += 1
            fixed = technique == works and rng.random() < 0.9
            store.on_task_complete(task, {"success": fixed, "technique": technique, "error": error,
                                          "summary": f"retried with {technique}"}, context=ctx)
        out.append((retries, fixed))
    return out


def ladder(stream, seed: int) -> list[tuple[int, bool]]:
    rng = random.Random(seed + 2)
    out = []
    for _, _, works in stream:
        retries, fixed = 0, False
        while not fixed and retries < MAX_LADDER_RETRIES:
            technique = LADDER[retries % len(LADDER)]
            retries += 1
            fixed = technique == works and rng.random() < 0.9
        out.append((retries, fixed))
    return out


def best(stream, seed: int) -> list[tuple[int, bool]]:
    rng = random.Random(seed + 3)
    out = []
    for _ in stream:
        retries = 1
        while rng.random() >= 0.9:
            retries += 1
        out.append((retries, True))
    return out


def run(db: Path, n_tasks: int, seed: int = 0, quiet: bool = False) -> dict[str, list[tuple[int, bool]]]:
    stream = tasks(n_tasks, seed)
    with MemoryStore(db) as store:
        store.clear("harness-loop")
        results = {"learning": learning(store, stream, seed), "fixed ladder": ladder(stream, seed),
                   "best possible": best(stream, seed)}
    if not quiet:
        print("retries per task (escalated tasks in brackets), per window of 20 tasks")
        print(f"{'tasks':>9}  " + "  ".join(f"{name:>14}" for name in results))
        for start in range(0, n_tasks, WINDOW):
            cells = []
            for res in results.values():
                window = res[start : start + WINDOW]
                rate = sum(r for r, _ in window) / len(window)
                escalated = sum(1 for _, ok in window if not ok)
                cells.append(f"{rate:5.2f}" + (f" [{escalated:2d}]" if escalated else "     "))
            print(f"{start + 1:3d}-{start + len(window):3d}  " + "  ".join(f"{c:>14}" for c in cells))
        total = {name: sum(r for r, _ in res) / len(res) for name, res in results.items()}
        print("all tasks  " + "  ".join(f"{total[name]:14.2f}" for name in results))
    return results


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, help="database file (default: a new one in a temporary folder)")
    ap.add_argument("--tasks", type=int, default=120)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.db is not None:
        run(args.db, args.tasks, args.seed)
    else:
        with tempfile.TemporaryDirectory() as d:
            run(Path(d) / "harness-loop.db", args.tasks, args.seed)
