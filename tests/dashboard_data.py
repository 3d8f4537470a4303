"""A store with weeks of harness history, written through the public API, for the dashboard's tests,
screenshots and benchmark: tasks fail with recurring errors, the selector picks techniques,
outcomes are recorded, memories are recalled and credited, and the harness improves over time."""

from __future__ import annotations

import random

from harness_memory import MemoryStore
from harness_memory.testing import ManualClock

WEEK = 7 * 86400

ERRORS = [
    ("ModuleNotFoundError: No module named '{m}'", "install the missing package and pin it", ["python", "deps"]),
    (
        "TimeoutError: request to https://api.example.com/v{n} timed out after {n}0s",
        ("raise the client timeout and retry with backoff"),
        ["network"],
    ),
    ("AssertionError: expected {n} deliveries, got {k}", "use a fake clock in the test", ["tests", "flaky"]),
    (
        'error: Argument {n} to "render" has incompatible type "int"; expected "str"',
        "convert at the call site",
        ["mypy"],
    ),
    ("MemoryError: unable to allocate {n} GiB for an array", "stream the file in chunks", ["memory"]),
    (
        "PermissionError: [Errno 13] Permission denied: '/var/run/app{n}.sock'",
        "run the service as its own user",
        ["ops"],
    ),
]
TECHNIQUES = ["prompt_restructure", "decomposition", "fresh_start"]
# the technique that tends to work for each error (index into TECHNIQUES)
BEST = [1, 2, 0, 0, 1, 2]


def fill_history(
    store: MemoryStore,
    clock: ManualClock,
    *,
    weeks: int = 8,
    tasks_per_week: int = 10,
    seed: int = 7,
    namespace: str = "demo",
) -> dict[str, int]:
    """Write ``weeks`` of history ending at the clock's time + ``weeks`` weeks. Returns counts."""
    rng = random.Random(seed)
    counts = {"tasks": 0, "attempts": 0, "memories": 0, "applied": 0}
    for w in range(weeks):
        skill = w / max(1, weeks - 1)  # the harness gets better
        for t in range(tasks_per_week):
            clock.advance(WEEK / (tasks_per_week + 1))
            if rng.random() < 0.15 + 0.45 * skill:
                # an error never met before (what learning leaves: known errors are avoided, new ones remain)
                word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10))
                e = rng.randrange(len(ERRORS))
                err, fix, tags = (
                    f"{word.capitalize()}Error: the {word} setting is not defined",
                    f"define {word}",
                    ["config"],
                )
            else:
                e = rng.randrange(len(ERRORS))
                text, fix, tags = ERRORS[e]
                err = text.format(
                    m=rng.choice(["tenacity", "backoff", "httpx"]), n=rng.randint(1, 9), k=rng.randint(0, 1)
                )
            task = f"W{w}-T{t}"
            agent = rng.choice(["build-agent", "test-agent", "ops-agent"])
            counts["tasks"] += 1
            # recall what was learned, credit it (helpfulness rises with skill)
            hits = store.recall(f"{fix} {err}", agent_id=agent, namespace=namespace, error=err, limit=3, task_id=task)
            if hits:
                store.apply(hits[0].memory.id, helpful=rng.random() < 0.45 + 0.45 * skill, agent_id=agent, task_id=task)
                counts["applied"] += 1
            for _ in range(5):
                d = store.select_technique(task, err, techniques=TECHNIQUES + ["escalate"], seed=rng.randrange(1 << 30))
                if d.escalate:
                    store.record_outcome(
                        task, "escalate", False, error=err, result="escalated", agent_id=agent, namespace=namespace
                    )
                    counts["attempts"] += 1
                    break
                good = d.technique == TECHNIQUES[BEST[e]]
                ok = rng.random() < (0.75 if good else 0.2)
                store.record_outcome(
                    task, d.technique, ok, error=err, agent_id=agent, namespace=namespace, notes=f"tried {d.technique}"
                )
                counts["attempts"] += 1
                clock.advance(600)
                if ok:
                    break
            if rng.random() < 0.5:
                store.remember(
                    f"{fix} ({task})",
                    type="success",
                    agent_id=agent,
                    scope="global",
                    namespace=namespace,
                    error=err,
                    tags=tags,
                    importance=0.7,
                )
                counts["memories"] += 1
    return counts
