"""A runnable harness loop with a scripted fake agent (no LLM): the retry rate falls as the
memory learns which technique fixes which error.

    python examples/harness_loop.py [--db harness-loop.db] [--tasks 120]

Each task hits one of five kinds of error (real-looking error text with varying details).
For each kind one technique works (90% of the time) and the others do not; the harness does
not know which. On every failure it asks the memory for advice (`on_task_error`), retries with
the suggested technique, and reports the outcome (`on_task_complete`), so later tasks with
the same kind of error are fixed sooner.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from harness_memory import MemoryStore

TECHNIQUES = ["prompt_restructure", "decomposition", "fresh_start", "add_context", "escalate"]
KINDS = [
    ("ModuleNotFoundError: No module named '{w}'", "add_context"),
    ("TimeoutError: request to https://api.internal/{w} timed out after {n}s", "decomposition"),
    ("openai.BadRequestError: This model's maximum context length is 8192 tokens, you requested {n}", "fresh_start"),
    ("AssertionError: expected {n} rows in {w}, got {m}", "prompt_restructure"),
    ("TypeError: unsupported operand type(s) for +: 'int' and '{w}'", "add_context"),
]
WORDS = ["requests", "orders", "users", "billing", "tenacity", "pydantic", "invoices", "str", "NoneType"]


def run(db: Path, n_tasks: int, seed: int = 0, quiet: bool = False) -> list[int]:
    rng = random.Random(seed)
    attempts_per_task = []
    with MemoryStore(db) as store:
        store.clear("harness-loop")
        for i in range(n_tasks):
            template, works = rng.choice(KINDS)
            task = {"id": f"loop-{seed}-{i}", "title": f"task {i}: update the {rng.choice(WORDS)} module",
                    "agent_id": "fake-agent", "namespace": "harness-loop", "category": "feature"}
            error = template.format(w=rng.choice(WORDS), n=rng.randint(2, 9000), m=rng.randint(0, 5))
            ctx = store.on_task_start(task)
            attempts, fixed = 1, False  # the first attempt failed with `error`
            while not fixed:
                advice = store.on_task_error(task, error, techniques=TECHNIQUES, seed=rng.randrange(1 << 30))
                technique = advice.next.technique
                if technique == "escalate":
                    store.on_task_complete(task, {"success": False, "technique": "escalate", "error": error,
                                                  "summary": "escalated to a human"}, context=ctx)
                    break
                attempts += 1
                fixed = technique == works and rng.random() < 0.9
                store.on_task_complete(task, {"success": fixed, "technique": technique, "error": error,
                                              "summary": f"retried with {technique}"}, context=ctx)
            attempts_per_task.append(attempts)
    if not quiet:
        for start in range(0, n_tasks, 20):
            window = attempts_per_task[start : start + 20]
            retries = sum(a - 1 for a in window) / len(window)
            print(f"tasks {start + 1:3d}-{start + len(window):3d}: {retries:.2f} retries per task")
    return attempts_per_task


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--db", type=Path, default=Path("harness-loop.db"))
    ap.add_argument("--tasks", type=int, default=120)
    args = ap.parse_args()
    run(args.db, args.tasks)
