"""Would a small model trained on the store's own apply() credits make fix advice better? (issue 19)

    python benchmarks/fix_gate_model.py [--data ../shared/data] [--sources agent-runs scripted defects4j]
                                        [--task run|command] [--fix-similar-min X]

Issue 19's optional item: "a small model (scikit-learn) trained on the store's own outcome and apply() log
that predicts whether a fix will help, judged by replay against the evidence ranking and used only when it
wins". This is that judgement, before any such model is built into the library.

The replay is ``fix_recall.py``'s (the same sources, split, teaching through ``learn_success`` and asking
through ``on_task_error``, with ``apply(helpful=hit)`` after each answer). Each fix shown becomes one
example: the evidence ``FixEvidence`` carries (level, worked, did not work, credits, variants, score,
similarity), its rank and the number shown, whether the error has an origin and a key frame; its label is
the credit the replay gives it. Prequential, as a store would learn: a logistic regression is refitted on
every credit given before the asked failure (from 30 examples with both labels on) and predicts the
helpfulness of the fixes offered for it; a fix below the threshold is withheld (``gate``) and the rest are
re-ordered by the prediction (hit@1 ``rerank``). Printed beside the evidence ranking alone (``off``): hit@1
and hit@3 over all asked pairs, false advice (repair never taught; failure never repaired).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import warnings
import zlib
from pathlib import Path

import numpy as np

import fix_recall as fr
from harness_memory import MemoryStore, Settings

LEVELS = ["exact", "alias", "task", "origin", "similar", "general"]
MIN_EXAMPLES = 30


def features(e, pos: int, shown: int, sig) -> list[float]:
    def slog(x: float) -> float:
        return math.copysign(math.log1p(abs(x)), x)

    return [
        *(1.0 if e.level == lv else 0.0 for lv in LEVELS),
        slog(e.worked),
        slog(e.failed),
        slog(e.helpful),
        slog(e.unhelpful),
        slog(e.variants),
        slog(e.score),
        e.similarity,
        (e.helpful + 1) / (e.helpful + e.unhelpful + 2),
        float(pos),
        float(shown),
        1.0 if sig.origin else 0.0,
        1.0 if sig.frame else 0.0,
    ]


def collect(src: fr.Source, settings: dict) -> list[tuple[fr.Case, bool, list[tuple[list[float], bool]]]]:
    """The replay: per asked failure, its case, whether its repair was taught, and (features, helpful) per fix."""
    with tempfile.TemporaryDirectory() as d:
        store = MemoryStore(Path(d) / "gate.db", settings=Settings(**settings))
        teach = fr.Teacher(store, "learn_success")
        known: dict[str, str] = {}
        taught: set[str] = set()
        for t in sorted((t for t in src.tasks if t.teach), key=lambda t: t.order):
            for c in t.cases:
                if c.repair is not None:
                    teach(c)
                    known[c.repair.strip()] = c.repair_shape
                    taught.add(c.repair_shape)
        out = []
        for t in sorted((t for t in src.tasks if not t.teach), key=lambda t: t.order):
            for c in t.cases:
                advice = store.on_task_error({"id": c.case_id, "title": fr.title_of(c), "agent_id": fr.AGENT}, c.error)
                shown = advice.fix_evidence[:3]
                rows = []
                for i, e in enumerate(shown):
                    hit = src.answer_shape(e.memory.content, known) == c.repair_shape
                    rows.append((features(e, i, len(shown), advice.signature), hit))
                    store.apply(e.memory.id, helpful=hit, agent_id=fr.AGENT, task_id=c.case_id)
                out.append((c, c.repair_shape is not None and c.repair_shape in taught, rows))
        store.close()
    return out


def _fit(xs: list[list[float]], ys: list[bool]):
    from sklearn.linear_model import LogisticRegression

    if len(ys) < MIN_EXAMPLES or not 0 < sum(ys) < len(ys):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LogisticRegression(max_iter=1000).fit(np.array(xs), np.array(ys))


def evaluate(recs, threshold: float | None, folds: int = 0) -> dict[str, float]:
    """Prequential (``folds`` 0: each failure judged by a model of the credits before it) or cross-fitted
    (``folds`` k: by a model of the credits of the other k-1 folds of runs, a store with a long history)."""
    fold_of = [zlib.crc32(c.run_title.encode()) % folds if folds else 0 for c, _, _ in recs]
    fold_models = {}
    if folds:
        for k in range(folds):
            other = [r for (_, _, rows), f in zip(recs, fold_of) if f != k for r in rows]
            fold_models[k] = _fit([f for f, _ in other], [h for _, h in other])
    xs: list[list[float]] = []
    ys: list[bool] = []
    model = None
    n = {"pairs": 0, "hit1": 0, "hit3": 0, "unseen": 0, "fa_unseen": 0, "norep": 0, "fa_norep": 0}
    for (c, seen, rows), fold in zip(recs, fold_of):
        keep = rows
        if folds:
            model = fold_models[fold]
        if threshold is not None and rows and model is not None:
            p = model.predict_proba(np.array([r[0] for r in rows]))[:, 1]
            keep = [r for r, q in sorted(zip(rows, p), key=lambda rq: -rq[1]) if q >= threshold]
        if c.repair_shape is not None:
            n["pairs"] += 1
            n["hit1"] += bool(keep) and keep[0][1]
            n["hit3"] += any(h for _, h in keep)
            if not seen:
                n["unseen"] += 1
                n["fa_unseen"] += bool(keep)
        else:
            n["norep"] += 1
            n["fa_norep"] += bool(keep)
        if not folds:
            for f, h in rows:
                xs.append(f)
                ys.append(h)
            model = _fit(xs, ys)

    def rate(a: str, b: str) -> float:
        return n[a] / n[b] if n[b] else float("nan")

    return {
        "hit@1": rate("hit1", "pairs"),
        "hit@3": rate("hit3", "pairs"),
        "false unseen": rate("fa_unseen", "unseen"),
        "false no repair": rate("fa_norep", "norep"),
        "examples": sum(len(rows) for _, _, rows in recs),
        "helpful": sum(h for _, _, rows in recs for _, h in rows),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="benchmark data folder (default ../shared/data)")
    ap.add_argument("--sources", nargs="+", default=["agent-runs", "scripted", "defects4j"])
    ap.add_argument("--task", choices=["command", "run"], default="run")
    ap.add_argument("--fix-similar-min", type=float, default=None)
    ap.add_argument(
        "--folds", type=int, default=0, help="cross-fit over this many folds of runs instead of prequential (0)"
    )
    ap.add_argument("--thresholds", type=float, nargs="+", default=[0.1, 0.3, 0.5, 0.7])
    args = ap.parse_args(argv)
    data = fr.data_dir(args.data)
    fr.TASK = args.task
    settings = {} if args.fix_similar_min is None else {"fix_similar_min": args.fix_similar_min}
    how = f"cross-fitted over {args.folds} folds of runs" if args.folds else "prequential"
    print(f"fix advice gate model, {how}: task={args.task} settings={settings or 'defaults'}")
    for src in fr.load_sources(args.sources, data, fr.SESSIONS):
        recs = collect(src, settings)
        rows = []
        for thr in [None, *args.thresholds]:
            r = evaluate(recs, thr, args.folds)
            rows.append(
                [
                    "off (evidence only)" if thr is None else f"gate at {thr:.1f}",
                    *(f"{r[k]:.3f}" for k in ("hit@1", "hit@3", "false unseen", "false no repair")),
                    f"{r['examples']} ({r['helpful']} helpful)",
                ]
            )
        print(
            fr.table(
                f"{src.name}",
                ["model", "hit@1 all", "hit@3 all", "false adv. unseen", "false adv. no repair", "credits"],
                rows,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
