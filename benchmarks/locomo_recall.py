"""LoCoMo retrieval: recall@5/10/25 for keyword-only, vector-only and hybrid recall.

    python benchmarks/locomo_recall.py --data ../shared/data

One namespace per conversation, every turn a memory, every question a query; recall@k is
the share of a question's evidence turns found in the top k, averaged over questions with
evidence. ``--grid`` also scores a few keyword/vector weightings (how the default was chosen).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_dir, pct, table
from harness_memory import MemoryStore, RankingWeights, Settings

KS = (5, 10, 25)


def norm_evidence(ev: str) -> list[str]:
    out = []
    for part in re.split(r"[;,]", ev):
        m = re.search(r"D:?(\d+):0*(\d+)", part.strip())
        if m:
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def load(path: Path):
    convs = json.loads(path.read_text())
    for c in convs:
        turns = []
        conv = c["conversation"]
        for key in sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
            for t in conv[key]:
                text = f"{t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    text += f" [shares a photo: {t['blip_caption']}]"
                m = re.fullmatch(r"D(\d+):(\d+)", t["dia_id"])
                turns.append((f"D{int(m.group(1))}:{int(m.group(2))}" if m else t["dia_id"], text))
        qs = []
        for q in c["qa"]:
            ev = [e for x in q.get("evidence", []) for e in norm_evidence(x)]
            if ev:
                qs.append((q["question"], set(ev)))
        yield c["sample_id"], turns, qs


def run(data: Path, variants: dict[str, tuple[set[str], RankingWeights]], db: str = "sqlite"):
    from latency import _fresh_targets

    if db == "pgserver":  # one throwaway server for every variant
        import os

        os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="hm-run-"))  # quiets platformdirs
        import pgserver

        db = pgserver.get_server(tempfile.mkdtemp(prefix="hm-locomo-pg-"), cleanup_mode="delete").get_uri()
    results = {name: {k: [] for k in KS} for name in variants}
    lat = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as d:
        for name, (channels, weights) in variants.items():
            st = Settings(ranking=weights, near_duplicate_threshold=1.0)
            ((_, target, cleanup),) = (
                _fresh_targets([db], Path(d) / "variant")
                if db != "sqlite"
                else (("sqlite", Path(d) / f"{name}.db", lambda: None),)
            )
            with MemoryStore(target, settings=st) as s:
                for sample, turns, qs in load(data / "locomo" / "locomo-dev.json"):
                    ns = f"locomo-{sample}"
                    mems = s.remember_many(
                        [{"content": t, "type": "pattern", "agent_id": "reader", "namespace": ns} for _, t in turns]
                    )
                    by_id: dict[int, set[str]] = {}
                    for (dia, _), m in zip(turns, mems):  # exact repeats fold into one memory
                        by_id.setdefault(m.id, set()).add(dia)
                    for question, evidence in qs:
                        t0 = time.perf_counter()
                        hits = s.recall(
                            question, agent_id="reader", namespace=ns, limit=max(KS), channels=channels, record=False
                        )
                        lat[name].append((time.perf_counter() - t0) * 1000)
                        for k in KS:
                            found = set().union(*(by_id[h.memory.id] for h in hits[:k])) if hits else set()
                            results[name][k].append(len(found & evidence) / len(evidence))
            cleanup()
    return results, lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    ap.add_argument("--grid", action="store_true", help="also score alternative keyword/vector weights")
    ap.add_argument(
        "--db", default="sqlite", help="sqlite (default) | pgserver | postgresql://URL (a throwaway schema per variant)"
    )
    args = ap.parse_args()
    data = data_dir(args.data)
    default = RankingWeights()
    variants = {
        "keyword only": ({"keyword"}, default),
        "vector only": ({"vector"}, default),
        f"hybrid (default: kw {default.keyword}, vec {default.vector})": ({"keyword", "vector"}, default),
    }
    if args.grid:
        for kw, vec in ((0.5, 0.5), (0.6, 0.4), (0.8, 0.2), (0.9, 0.1)):
            variants[f"hybrid kw {kw}, vec {vec}"] = (
                {"keyword", "vector"},
                default.model_copy(update={"keyword": kw, "vector": vec}),
            )
    results, lat = run(data, variants, args.db)
    rows = []
    for name in variants:
        n = len(results[name][5])
        rows.append([name, n] + [100 * sum(results[name][k]) / n for k in KS] + [pct(lat[name], 50)])
    print(
        table(
            f"LoCoMo (dev: 5 conversations) recall@k in % on {args.db.split('://')[0]}, question embedding "
            "included in latency",
            ["variant", "questions", "R@5", "R@10", "R@25", "p50 ms"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
