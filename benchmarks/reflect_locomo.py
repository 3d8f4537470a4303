"""Reflection on LoCoMo: does searching reflected facts beside the turns help recall?

    python benchmarks/reflect_locomo.py --data ../shared/data

Each conversation is a namespace, each session a thread, each turn an ``episode``; every session
is reflected offline (extractive, no summariser) into ``fact`` / ``pattern`` memories linked to
their source turns. For every question with evidence, recall@10 is the share of its evidence
turns found in the top 10:

- turns only: recall over the episodes;
- turns + facts: recall over episodes and facts; a fact hit counts as finding the turns it was
  reflected from (its ``memory_sources``);
- facts only: the same over the facts alone.

Reported whichever way it goes (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_dir, pct, table
from harness_memory import MemoryStore, Settings
from locomo_recall import load

K = 10


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    args = ap.parse_args()
    data = data_dir(args.data)
    variants = {
        "turns only": ["episode"],
        "turns + facts": ["episode", "fact", "pattern"],
        "facts only": ["fact", "pattern"],
    }
    scores: dict[str, list[float]] = {name: [] for name in variants}
    lat: dict[str, list[float]] = {name: [] for name in variants}
    n_turns = n_facts = n_sessions = 0
    reflect_s = 0.0
    with tempfile.TemporaryDirectory() as d, MemoryStore(Path(d) / "r.db", settings=Settings()) as s:
        for sample, turns, qs in load(data / "locomo" / "locomo-dev.json"):
            ns = f"locomo-{sample}"
            items = [
                {
                    "content": t,
                    "type": "episode",
                    "agent_id": "reader",
                    "namespace": ns,
                    "thread_id": f"session-{dia.split(':')[0][1:]}",
                }
                for dia, t in turns
            ]
            mems = s.remember_many(items)
            dia_of = {m.id: dia for (dia, _), m in zip(turns, mems)}
            n_turns += len(turns)
            n_sessions += len({it["thread_id"] for it in items})
            t0 = time.perf_counter()
            facts = s.reflect(namespace=ns, agent_id="reader")
            reflect_s += time.perf_counter() - t0
            n_facts += len(facts)
            found_by = {m.id: {dia_of[x.id] for x in s.reflection_sources(m.id) if x.id in dia_of} for m in facts}
            found_by.update({mid: {dia} for mid, dia in dia_of.items()})
            for question, evidence in qs:
                for name, types in variants.items():
                    t0 = time.perf_counter()
                    hits = s.recall(question, agent_id="reader", namespace=ns, types=types, limit=K, record=False)
                    lat[name].append((time.perf_counter() - t0) * 1000)
                    got = set().union(*(found_by.get(h.memory.id, set()) for h in hits)) if hits else set()
                    scores[name].append(len(got & evidence) / len(evidence))
    rows = [
        [name, len(scores[name]), 100 * sum(scores[name]) / len(scores[name]), pct(lat[name], 50)] for name in variants
    ]
    print(
        table(
            f"LoCoMo dev: {n_turns} turns in {n_sessions} sessions reflected into {n_facts} facts/patterns "
            f"in {reflect_s:.1f} s (extractive); recall@{K} of the evidence turns in %",
            ["variant", "questions", f"R@{K}", "p50 ms"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
