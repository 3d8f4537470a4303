"""``harness-memory demo``: a scripted harness run on a local SQLite file, offline.

A build agent meets three tasks. Each fails first; the harness stores the failure (with
the raw error, which is signed and redacted), retries with another technique, stores what
fixed it and records both attempts in the technique ledger. Then a new, similar task fails
with a related error: the harness asks the ledger which technique to retry with
(``select_technique``), recalls what it learned, shows why each memory ranked where it did
and how confident recall is, applies the best one and credits it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .store import MemoryStore

NAMESPACE = "demo"
AGENT = "build-agent"
TECHNIQUES = ["prompt_restructure", "add_context", "decomposition", "fresh_start", "escalate"]


class _Task(TypedDict):
    task_id: str
    title: str
    signature: str
    tags: list[str]
    error: str


class _ScriptedTask(_Task):
    failed: str
    fix: str
    tried: str
    worked: str


SCRIPT: list[_ScriptedTask] = [
    {
        "task_id": "T-101",
        "title": "Add retry with backoff to the HTTP client",
        "signature": "feature:http:client",
        "tags": ["python", "http", "dependencies"],
        "error": (
            'Traceback (most recent call last):\n  File "/srv/app/http/client.py", line 3, in <module>\n'
            "    import tenacity\nModuleNotFoundError: No module named 'tenacity'"
        ),
        "failed": "Ran the new retry code without installing tenacity; the import failed at start-up.",
        "fix": "Add the missing package to requirements.txt (pip install tenacity), pin its version, re-run the tests.",
        "tried": "prompt_restructure",
        "worked": "add_context",
    },
    {
        "task_id": "T-102",
        "title": "Fix flaky payment webhook test",
        "signature": "bugfix:payments:tests",
        "tags": ["python", "tests", "flaky"],
        "error": (
            "FAILED tests/test_webhook.py::test_retry_delivery - AssertionError: expected 3 deliveries, got 2 "
            "(timeout after 5.0s) token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"
        ),
        "failed": "Increasing the sleep in the test only made it slower and still flaky.",
        "fix": "Replace time.sleep with a fake clock in the webhook test so retries are deterministic.",
        "tried": "fresh_start",
        "worked": "decomposition",
    },
    {
        "task_id": "T-103",
        "title": "Type-check the reporting module",
        "signature": "chore:reporting:typing",
        "tags": ["python", "mypy"],
        "error": 'reporting/summary.py:42: error: Argument 1 to "render" has incompatible type "int"; expected "str"',
        "failed": "Silencing the error with type: ignore was rejected in review.",
        "fix": "Convert the total with str() at the call site instead of widening render()'s signature.",
        "tried": "fresh_start",
        "worked": "prompt_restructure",
    },
]

NEW_TASK: _Task = {
    "task_id": "T-201",
    "title": "Add retry to the HTTP downloader",
    "signature": "feature:http:downloader",
    "tags": ["python", "http"],
    "error": (
        'Traceback (most recent call last):\n  File "/opt/build-7/app/http/client.py", line 9, in <module>\n'
        "    import backoff\nModuleNotFoundError: No module named 'backoff'"
    ),
}


def run_demo(db: Path, *, console: Console | None = None, as_json: bool = False) -> dict[str, Any]:
    console = console or Console()
    say = (lambda *a, **k: None) if as_json else console.print
    report: dict[str, Any] = {"db": str(db), "stored": [], "recalled": [], "applied": None}
    with MemoryStore(db) as store:
        store.clear(NAMESPACE)  # re-runs start from the same state
        say(f"[bold]harness-memory demo[/] on {db} (embedder {store.embedder.name}, namespace {NAMESPACE!r})\n")
        for task in SCRIPT:
            say(f"[bold]{task['task_id']}[/] {task['title']}: attempt 1 [red]failed[/]")
            fail = store.remember(
                f"{task['title']}: {task['failed']}",
                type="failure",
                agent_id=AGENT,
                namespace=NAMESPACE,
                error=task["error"],
                task_signature=task["signature"],
                tags=task["tags"],
                importance=0.7,
                task_id=task["task_id"],
            )
            say(f"  stored failure #{fail.id}, error signature {fail.error_signature} = [dim]{fail.error_template}[/]")
            ok = store.remember(
                f"{task['title']}: {task['fix']}",
                type="success",
                agent_id=AGENT,
                scope="global",
                namespace=NAMESPACE,
                error=task["error"],
                task_signature=task["signature"],
                tags=task["tags"],
                importance=0.8,
                task_id=task["task_id"],
            )
            say(f"  attempt 2 [green]fixed[/]; stored success #{ok.id} (global, shared with every agent)")
            report["stored"] += [fail.model_dump(mode="json"), ok.model_dump(mode="json")]
            store.apply(ok.id, helpful=True, outcome="fixed on retry", agent_id=AGENT, task_id=task["task_id"])
            for technique, worked in ((task["tried"], False), (task["worked"], True)):
                store.record_outcome(
                    f"{NAMESPACE}-{task['task_id']}",
                    technique,
                    worked,
                    error=task["error"],
                    agent_id=AGENT,
                    namespace=NAMESPACE,
                    task_category=task["signature"].split(":")[0],
                )
            say(f"  ledger: {task['tried']} did not fix it, {task['worked']} did")
        secret_note = next(m for m in report["stored"] if m["task_id"] == "T-102" and m["type"] == "failure")
        say(
            f"\n  (the GitHub token in T-102's error was redacted before storage: "
            f"{secret_note['metadata'].get('redacted', [])})\n"
        )

        t = NEW_TASK
        say(f"[bold]{t['task_id']}[/] {t['title']}: attempt 1 [red]failed[/] with\n[dim]{t['error']}[/]")
        seen = store.has_seen_error(AGENT, t["error"], namespace=NAMESPACE)
        say(
            f"  seen this error before? [bold]{'yes' if seen else 'no'}[/] (same signature: module name, path and line are masked)"
        )
        decision = store.select_technique(
            f"{NAMESPACE}-{t['task_id']}", t["error"], techniques=TECHNIQUES, task_category="feature", seed=0
        )
        say(f"  retry with [bold]{decision.technique}[/] (select_technique, from the ledger): {decision.reason}")
        report["technique"] = {"technique": decision.technique, "reason": decision.reason}
        hits = store.recall(
            f"{t['title']} {t['error']}",
            agent_id="fresh-agent",
            namespace=NAMESPACE,
            error=t["error"],
            task_signature="feature:http",
            tags=t["tags"],
            limit=4,
            task_id=t["task_id"],
        )
        if not as_json:
            table = Table(
                title=f"recalled for {t['task_id']} by another agent (sees global memories only)", show_lines=True
            )
            for col in ("id", "score", "confidence", "type", "content / why"):
                table.add_column(col, overflow="fold")
            for h in hits:
                table.add_row(
                    str(h.memory.id),
                    f"{h.score:.3f}",
                    f"{h.confidence:.2f}",
                    h.memory.type,
                    f"{escape(h.memory.content)}\n[dim]{escape(h.breakdown.describe())}[/]",
                )
            console.print(table)
        report["recalled"] = [
            {
                "id": h.memory.id,
                "score": h.score,
                "confidence": h.confidence,
                "explain": h.explain(),
                "content": h.memory.content,
            }
            for h in hits
        ]
        if hits:
            best = hits[0].memory
            applied = store.apply(
                best.id, helpful=True, outcome="fixed on attempt 2", agent_id="fresh-agent", task_id=t["task_id"]
            )
            say(
                f"  applied #{best.id} -> attempt 2 [green]fixed[/]; its record: applied {applied.times_applied}x, "
                f"success rate {applied.success_rate:.2f}"
            )
            report["applied"] = applied.model_dump(mode="json")
        st = store.stats(namespace=NAMESPACE)
        say(
            f"\n{st['memories']} memories in namespace {NAMESPACE!r}; access log: "
            + ", ".join(f"{k} {n}" for k, n in st["access_log"])
        )
    if as_json:
        import json
        import sys

        sys.stdout.write(json.dumps(report, default=str, indent=2) + "\n")
    return report
