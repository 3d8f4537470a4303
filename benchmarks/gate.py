"""The injection gate on LoCoMo: does the memory stay quiet on tasks it knows nothing about?

    python benchmarks/gate.py --data ../shared/data

Data: ``locomo/locomo-dev.json`` under ``--data`` (LoCoMo, GitHub snap-research/LoCoMo,
``data/locomo10.json``, CC BY-NC 4.0; see ../shared/data/README.md). One store per
conversation, every turn a memory. *Related* tasks: a conversation's questions asked of its
own store; *unrelated* tasks: its questions asked of every other conversation's store.

For each task, the ungated top 8 hits (``recall(limit=8)``) and their evidence
(``hit.evidence``) are collected once. Then:

* the text coefficients of the confidence are fit by logistic regression (classes weighted
  equally) on the hits' evidence, the label being "the store is the task's own conversation";
* the gate ``inject_min`` is the largest threshold whose related tasks keep at least
  ``--target`` of the ungated top 8's evidence recall on the fitting set;
* figures: *quiet* = share of unrelated tasks with no hit at or above the gate; *kept* =
  related tasks' evidence recall with the gate over the ungated top 8's.

Reported: in-sample (fit and choose on all conversations), held-out (leave one conversation
out: fit and choose without it, score on every task that involves it), and the shipped
defaults of ``Settings.confidence``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_dir, table
from harness_memory import MemoryStore, Settings
from harness_memory.confidence import text_confidence
from harness_memory.settings import ConfidenceWeights
from locomo_recall import load

FEATURES = ("unseen", "best_keyword", "best_vector", "vector")
LIMIT = 8


def collect(path: Path):
    """One row per (task, hit): conversation asked, store, task index, evidence, recall share."""
    convs = list(load(path))
    rows = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        stores = {}
        for sample, turns, _ in convs:
            s = MemoryStore(Path(d) / f"{sample}.db", settings=Settings(near_duplicate_threshold=1.0))
            mems = s.remember_many([{"content": t, "type": "pattern", "agent_id": "reader"} for _, t in turns])
            by_id: dict[int, set[str]] = {}
            for (dia, _), m in zip(turns, mems):
                by_id.setdefault(m.id, set()).add(dia)
            stores[sample] = (s, by_id)
        try:
            for qsample, _, qs in convs:
                for ssample, (s, by_id) in stores.items():
                    for qi, (question, evidence) in enumerate(qs):
                        hits = s.recall(question, agent_id="reader", limit=LIMIT, record=False)
                        for h in hits:
                            share = (len(by_id[h.memory.id] & evidence) / len(evidence)) if qsample == ssample else 0.0
                            rows.append(
                                (qsample, ssample, qi, [h.evidence[f] for f in FEATURES], share, h.score, h.confidence)
                            )
                        if not hits:
                            rows.append((qsample, ssample, qi, None, 0.0, 0.0, 0.0))
        finally:
            for s, _ in stores.values():
                s.close()
    print(
        f"collected {len(rows)} hits of {len(convs)} conversations in {time.perf_counter() - t0:.0f} s", file=sys.stderr
    )
    return rows


class Data:
    def __init__(self, rows):
        keep = [r for r in rows if r[3] is not None]
        self.X = np.array([r[3] for r in keep], dtype=float)
        self.q = np.array([r[0] for r in keep])
        self.st = np.array([r[1] for r in keep])
        self.related = self.q == self.st
        task_keys = {}
        self.task = np.array([task_keys.setdefault((r[0], r[1], r[2]), len(task_keys)) for r in keep])
        self.share = np.array([r[4] for r in keep])
        self.score = np.array([r[5] for r in keep])
        self.conf = np.array([r[6] for r in keep])
        # tasks with no hit at all are quiet whatever the gate
        self.empty = [(r[0], r[1]) for r in rows if r[3] is None]
        self.n_tasks = len(task_keys) + len(self.empty)

    def figures(self, p: np.ndarray, tau: float, mask: np.ndarray) -> tuple[float, float, int, int]:
        """(kept, quiet, related tasks, unrelated tasks) over the hits in ``mask``."""
        rel, un = mask & self.related, mask & ~self.related
        base = self.share[rel].sum()
        kept = self.share[rel & (p >= tau)].sum() / base if base > 0 else 1.0
        un_tasks = np.unique(self.task[un])
        loud = np.unique(self.task[un & (p >= tau)])
        n_un = len(un_tasks) + sum(1 for q, s in self.empty if q != s and self._in(mask, q, s))
        return kept, 1.0 - len(loud) / n_un if n_un else 1.0, len(np.unique(self.task[rel])), n_un

    def _in(self, mask, q, s):
        sel = (self.q == q) | (self.st == s)
        return bool(np.any(mask & sel))


def fit(data: Data, mask: np.ndarray):
    from sklearn.linear_model import LogisticRegression

    m = LogisticRegression(C=10.0, max_iter=5000, class_weight="balanced")
    m.fit(data.X[mask], data.related[mask])
    return m


def choose(data: Data, p: np.ndarray, mask: np.ndarray, target: float) -> float:
    best = 0.0
    for tau in np.round(np.arange(0.01, 1.0, 0.01), 2):
        if data.figures(p, tau, mask)[0] >= target:
            best = float(tau)
    return best


def weights_of(model) -> ConfidenceWeights:
    c = model.coef_[0]
    return ConfidenceWeights(
        intercept=round(float(model.intercept_[0]), 2), **{f: round(float(x), 2) for f, x in zip(FEATURES, c)}
    )


def probs(data: Data, w: ConfidenceWeights) -> np.ndarray:
    return np.array([text_confidence(dict(zip(FEATURES, x)), w) for x in data.X])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="folder holding locomo/locomo-dev.json (default ../shared/data)")
    ap.add_argument(
        "--target",
        type=float,
        default=0.92,
        help="share of the ungated top 8's evidence recall the gate must keep on the fitting set",
    )
    args = ap.parse_args()
    path = data_dir(args.data) / "locomo" / "locomo-dev.json"
    if not path.exists():
        sys.exit(f"{path} not found: see ../shared/data/README.md (LoCoMo, snap-research/LoCoMo)")
    data = Data(collect(path))
    everything = np.ones(len(data.X), dtype=bool)

    from sklearn.metrics import roc_auc_score

    top_score, top_conf, top_rel = {}, {}, {}
    for t, s, c, r in zip(data.task, data.score, data.conf, data.related):
        top_score[t] = max(top_score.get(t, 0.0), s)
        top_conf[t] = max(top_conf.get(t, 0.0), c)
        top_rel[t] = r
    keys = list(top_rel)
    print(
        f"ROC AUC, related vs unrelated task: top hit's score {roc_auc_score([top_rel[k] for k in keys], [top_score[k] for k in keys]):.3f}, "
        f"top hit's confidence (shipped weights) {roc_auc_score([top_rel[k] for k in keys], [top_conf[k] for k in keys]):.3f}"
    )

    rows = []
    shipped = Settings().confidence
    p = probs(data, shipped)
    kept, quiet, n_rel, n_un = data.figures(p, shipped.inject_min, everything)
    rows.append(["shipped defaults", "all", shipped.inject_min, kept, quiet, n_rel, n_un])
    kept0, quiet0, _, _ = data.figures(p, 0.0, everything)
    rows.append(["no gate", "all", 0.0, kept0, quiet0, n_rel, n_un])

    model = fit(data, everything)
    w = weights_of(model)
    p = probs(data, w)
    tau = choose(data, p, everything, args.target)
    rows.append(["in-sample", "all", tau, *data.figures(p, tau, everything)])
    print(
        "fitted on all: "
        + ", ".join(f"{k} {v}" for k, v in w.model_dump().items() if k in ("intercept", *FEATURES))
        + f", inject_min {tau}"
    )
    held = []
    for c in sorted(set(data.q)):
        train = (data.q != c) & (data.st != c)
        test = (data.q == c) | (data.st == c)
        wc = weights_of(fit(data, train))
        pc = probs(data, wc)
        tc = choose(data, pc, train, args.target)
        figs = data.figures(pc, tc, test)
        held.append(figs)
        rows.append([f"held-out {c}", c, tc, *figs])
    rows.append(
        [
            "held-out mean",
            "-",
            float("nan"),
            float(np.mean([h[0] for h in held])),
            float(np.mean([h[1] for h in held])),
            sum(h[2] for h in held),
            sum(h[3] for h in held),
        ]
    )
    print(
        table(
            f"Injection gate on LoCoMo (top {LIMIT}; kept = evidence recall kept vs ungated; quiet = unrelated "
            "tasks with nothing injected)",
            ["setting", "conversation", "inject_min", "kept", "quiet", "related tasks", "unrelated tasks"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
