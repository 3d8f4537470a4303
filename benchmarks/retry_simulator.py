"""A harness simulator for the technique selector.

    python benchmarks/retry_simulator.py --data ../shared/data --seeds 5

Error classes are drawn from real error text (Defects4J traces grouped by bug, loghub
messages grouped by event) and each gets hidden per-technique success probabilities that
share a profile within its error category. 2,000 tasks arrive (popular errors recur), each
with a fresh instance of its class's error text, and are retried until fixed or escalated
(at most 5 attempts). Policies:

- ladder: the fixed default order;
- greedy: highest observed success rate for this error signature, else the ladder
  (``selectSIATechnique`` of the design this grew from);
- selector: ``MemoryStore.select_technique`` / ``record_outcome`` (the real store, on disk);
- oracle: knows the hidden probabilities.

Regret of a decision = the best untried technique's probability minus the chosen one's
(0 for escalating when every technique was tried or the limit was hit).
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_dir, table
from harness_memory import MemoryStore, Settings
from harness_memory.error_signatures import categorize, extract

TECHNIQUES = ["prompt_restructure", "decomposition", "fresh_start", "add_context", "rollback_and_retry", "switch_model"]
MAX_ATTEMPTS = 5


def load_classes(data: Path, n_classes: int, rng: random.Random) -> list[dict]:
    pools: dict[str, list[str]] = collections.defaultdict(list)
    for line in (data / "defects4j-traces" / "traces-dev.jsonl").open(encoding="utf-8"):
        r = json.loads(line)
        pools[f"d4j:{r['group']}"].append(r["trace"])
    for system in ("Android", "HDFS", "Linux", "OpenSSH", "Spark", "Zookeeper", "HealthApp", "Apache"):
        path = data / "loghub-2k" / system / f"{system}_2k.log_structured.csv"
        for r in csv.DictReader(path.open(encoding="utf-8")):
            pools[f"{system}:{r['EventId']}"].append(r["Content"])
    keys = sorted(k for k, v in pools.items() if len(v) >= 2)
    chosen = rng.sample(keys, n_classes)
    classes = []
    for k in chosen:
        texts = pools[k]
        classes.append({"key": k, "texts": texts, "category": categorize(extract(texts[0]))})
    return classes


def assign_probabilities(classes: list[dict], rng: random.Random) -> None:
    profiles: dict[str, dict[str, float]] = {}
    for c in classes:
        prof = profiles.setdefault(c["category"], {t: rng.betavariate(0.8, 2.2) for t in TECHNIQUES})
        c["p"] = {t: min(0.97, max(0.01, prof[t] + rng.gauss(0, 0.12))) for t in TECHNIQUES}


class Ladder:
    name = "fixed ladder"

    def choose(self, task, cls, tried):
        return next((t for t in TECHNIQUES if t not in tried), None)

    def record(self, task, cls, tech, ok):
        pass


class Greedy(Ladder):
    name = "greedy (observed rate)"

    def __init__(self, store):
        self.store = store
        self.stats = collections.defaultdict(lambda: [0, 0])

    def choose(self, task, cls, tried):
        sig = task["sig"]
        rated = [
            (self.stats[(sig, t)][0] / self.stats[(sig, t)][1], t)
            for t in TECHNIQUES
            if t not in tried and self.stats[(sig, t)][1] > 0
        ]
        rated.sort(key=lambda x: -x[0])
        if rated and rated[0][0] > 0:
            return rated[0][1]
        return super().choose(task, cls, tried)

    def record(self, task, cls, tech, ok):
        s = self.stats[(task["sig"], tech)]
        s[0] += ok
        s[1] += 1


class Selector(Ladder):
    name = "selector (harness-memory)"

    def __init__(self, store, seed):
        self.store = store
        self.rng = random.Random(seed)

    def choose(self, task, cls, tried):
        d = self.store.select_technique(
            task["id"], task["error"], techniques=TECHNIQUES + ["escalate"], seed=self.rng.randrange(2**31)
        )
        return None if d.escalate else d.technique

    def record(self, task, cls, tech, ok):
        self.store.record_outcome(task["id"], tech, ok, error=task["error"], agent_id="sim")


class Oracle(Ladder):
    name = "oracle"

    def choose(self, task, cls, tried):
        untried = [t for t in TECHNIQUES if t not in tried]
        return max(untried, key=lambda t: cls["p"][t]) if untried else None


def simulate(policy, tasks, classes, rng: random.Random) -> dict:
    failed = escalated = 0
    regret = 0.0
    for task in tasks:
        cls = classes[task["cls"]]
        tried: list[str] = []
        fixed = False
        while len(tried) < MAX_ATTEMPTS:
            tech = policy.choose(task, cls, tried)
            untried = [t for t in TECHNIQUES if t not in tried]
            best = max(cls["p"][t] for t in untried) if untried else 0.0
            if tech is None:
                regret += best
                break
            regret += best - cls["p"][tech]
            ok = task["draws"][tech] < cls["p"][tech]
            policy.record(task, cls, tech, ok)
            tried.append(tech)
            if ok:
                fixed = True
                break
            failed += 1
        escalated += not fixed
    n = len(tasks)
    return {"failed_per_task": failed / n, "escalation_rate": escalated / n, "regret": regret}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=None)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--classes", type=int, default=60)
    args = ap.parse_args()
    data = data_dir(args.data)
    results: dict[str, list[dict]] = collections.defaultdict(list)
    for seed in range(args.seeds):
        rng = random.Random(seed)
        classes = load_classes(data, args.classes, rng)
        assign_probabilities(classes, rng)
        weights = [1 / (i + 1) ** 0.8 for i in range(len(classes))]
        with tempfile.TemporaryDirectory() as d:
            # signatures for the greedy rule come from the same signer (fair comparison)
            with MemoryStore(Path(d) / "sig.db") as sig_store:
                tasks = []
                for i in range(args.tasks):
                    c = rng.choices(range(len(classes)), weights)[0]
                    text = rng.choice(classes[c]["texts"])[:20000]
                    tasks.append(
                        {
                            "id": f"s{seed}-t{i}",
                            "cls": c,
                            "error": text,
                            "sig": sig_store.error_signature(text).id,
                            "draws": {t: rng.random() for t in TECHNIQUES},
                        }
                    )
                results["fixed ladder"].append(simulate(Ladder(), tasks, classes, rng))
                results["greedy (observed rate)"].append(simulate(Greedy(sig_store), tasks, classes, rng))
                results["oracle"].append(simulate(Oracle(), tasks, classes, rng))
            with MemoryStore(Path(d) / "sel.db", settings=Settings(max_retries=MAX_ATTEMPTS)) as store:
                results["selector (harness-memory)"].append(simulate(Selector(store, seed), tasks, classes, rng))
        print(
            f"seed {seed}: " + ", ".join(f"{k} {v[-1]['failed_per_task']:.3f}" for k, v in results.items()),
            file=sys.stderr,
        )
    rows = []
    for name in ("fixed ladder", "greedy (observed rate)", "selector (harness-memory)", "oracle"):
        rs = results[name]
        mean = {k: sum(r[k] for r in rs) / len(rs) for k in rs[0]}
        rows.append(
            [
                name,
                mean["failed_per_task"],
                mean["escalation_rate"],
                mean["regret"],
                " ".join(f"{r['failed_per_task']:.2f}" for r in rs),
            ]
        )
    print(
        table(
            f"retry simulator: {args.tasks} tasks x {args.seeds} seeds, {args.classes} error classes, "
            f"{len(TECHNIQUES)} techniques, <= {MAX_ATTEMPTS} attempts",
            ["policy", "failed attempts/task", "escalation rate", "cumulative regret", "failed/task per seed"],
            rows,
        )
    )
    ladder, greedy, ours = (
        sum(r["failed_per_task"] for r in results[k]) / args.seeds
        for k in ("fixed ladder", "greedy (observed rate)", "selector (harness-memory)")
    )
    g_reg, o_reg = (
        sum(r["regret"] for r in results[k]) / args.seeds
        for k in ("greedy (observed rate)", "selector (harness-memory)")
    )
    print(
        f"selector vs ladder: {100 * (1 - ours / ladder):.1f}% fewer failed attempts; "
        f"selector regret / greedy regret = {o_reg / g_reg:.2f}"
    )


if __name__ == "__main__":
    main()
