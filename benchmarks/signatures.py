"""Error-signature quality: grouping accuracy on loghub-2k and trace grouping + recall on Defects4J.

    python benchmarks/signatures.py --data ../shared/data

loghub-2k: every `Content` of 8 systems signed online in file order with one configuration
(a fresh database per system); grouping accuracy (GA) against `EventId`, and throughput (messages/s by the
wall clock and by this process's CPU time; the learned fallback's model is read before the clocks start).
Defects4J: every trace signed per project; GA, pairwise F1 and adjusted Rand index against
the bug groups; then one failure memory per bug (the first trace) and a recall with each
other trace of that bug: hit@1 and recall@5 of the same-bug memory.

    python benchmarks/signatures.py --data ../shared/data --d4j-only --d4j-analysis --d4j-loo

``--d4j-analysis`` adds the error analysis of the Defects4J figures, per project: the pairs of
traces a signature splits (same bug, two signatures) and merges (two bugs, one signature), the
ARI each would reach with every merge removed (signatures refined by the true bug) and with every
split removed (the signatures of one bug joined), and the recall queries by how their signature
relates to their bug's memory (its own, shared with other bugs' memories, another bug's, new),
with hit@1 for each kind. ``--d4j-loo`` chooses among signing methods 10, 16, 17, 18 and 21's settings (joined
test methods, throw sites, failing tests, throwers and compared differences, signed numbers in optional parts) on 8 projects and scores the 9th, for each of the 9.

    python benchmarks/signatures.py --systems tests/fixtures/system_logs

``--systems DIR`` prints only the grouping accuracy of every ``<System>/<System>_2k.log_structured.csv[.gz]`` under
DIR (the own system-log corpus of issue 8, or any Loghub-style folder), signed as above, beside a naive baseline
(digits masked, whitespace-split tokens as the template) and both without the rows marked ``PassThrough = yes``.

Same-bug recall is printed under two protocols: the benchmark's (a memory for every bug, including the
bugs with one trace, and every other trace of a bug a query: bugs with many traces weigh most) and the
data README's (memories only for the bugs with more than one trace, one query per bug), each pooled over
the queries and as the mean of the projects (the way ARI is averaged).
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sklearn.metrics import adjusted_rand_score

from _common import data_dir, table
from harness_memory import MemoryStore

SYSTEMS = ["Android", "Apache", "HDFS", "HealthApp", "Linux", "OpenSSH", "Spark", "Zookeeper"]


def grouping_accuracy(pred: list, truth: list) -> float:
    by_pred, by_truth = collections.defaultdict(set), collections.defaultdict(set)
    for i, (p, t) in enumerate(zip(pred, truth)):
        by_pred[p].add(i)
        by_truth[t].add(i)
    ok = 0
    for ids in by_pred.values():
        labels = {truth[i] for i in ids}
        if len(labels) == 1 and by_truth[next(iter(labels))] == ids:
            ok += len(ids)
    return ok / len(pred)


def pairwise_f1(pred: list, truth: list) -> float:
    def pairs(labels):
        groups = collections.defaultdict(list)
        for i, x in enumerate(labels):
            groups[x].append(i)
        return {p for g in groups.values() for p in combinations(g, 2)}

    pp, tp = pairs(pred), pairs(truth)
    if not pp or not tp:
        return 0.0
    inter = len(pp & tp)
    prec, rec = inter / len(pp), inter / len(tp)
    return 0.0 if inter == 0 else 2 * prec * rec / (prec + rec)


def canonical(store: MemoryStore, ids: list[str]) -> list[str]:
    miner = store._core.miner
    return [miner.canonical(i) for i in ids]


def loghub(data: Path, tmp: Path):
    from harness_memory import category_model

    category_model.load()  # read once per process: not counted in the first system's messages/s
    rows, gas = [], []
    for system in SYSTEMS:
        path = data / "loghub-2k" / system / f"{system}_2k.log_structured.csv"
        recs = list(csv.DictReader(path.open(encoding="utf-8")))
        with MemoryStore(tmp / f"loghub-{system}.db") as s:
            t0, c0 = time.perf_counter(), time.process_time()
            ids = [s.error_signature(r["Content"]).id for r in recs]
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            ids = canonical(s, ids)
        ga = grouping_accuracy(ids, [r["EventId"] for r in recs])
        gas.append(ga)
        rows.append(
            [
                system,
                len(recs),
                len(set(r["EventId"] for r in recs)),
                len(set(ids)),
                ga,
                round(len(recs) / dt),
                round(len(recs) / cpu),
            ]
        )
    rows.append(["mean", "", "", "", sum(gas) / len(gas), "", ""])
    return rows


# -- --systems DIR: the same grouping accuracy on any folder of Loghub-style systems ------------------
def read_structured(system_dir: Path) -> list[dict[str, str]]:
    """``<System>_2k.log_structured.csv`` of a system's folder, or its ``.gz``."""
    import gzip

    path = system_dir / f"{system_dir.name}_2k.log_structured.csv"
    if path.exists():
        with path.open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))
    with gzip.open(f"{path}.gz", "rt", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def naive_template(content: str) -> str:
    """The naive baseline: digits masked in whitespace-split tokens, the masked tokens are the template."""
    return " ".join(re.sub(r"\d+", "0", tok) for tok in content.split())


def systems_table(systems: Path, tmp: Path, limit: int | None = None) -> list[list]:
    """Every system folder under ``systems``, signed as ``loghub`` signs (a fresh store, online, file order): GA
    against ``EventId``, GA over the rows not marked ``PassThrough = yes`` (the same signatures, those rows left
    out of the scoring), and the naive baseline's GA both ways, in one run."""
    from harness_memory import category_model

    category_model.load()
    rows, cols = [], collections.defaultdict(list)
    for folder in sorted(p for p in systems.iterdir() if p.is_dir() and any(p.glob("*_2k.log_structured.csv*"))):
        recs = read_structured(folder)[:limit]
        with MemoryStore(tmp / f"systems-{folder.name}.db") as s:
            t0, c0 = time.perf_counter(), time.process_time()
            ids = [s.error_signature(r["Content"]).id for r in recs]
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            ids = canonical(s, ids)
        truth = [r["EventId"] for r in recs]
        naive = [naive_template(r["Content"]) for r in recs]
        keep = [i for i, r in enumerate(recs) if r.get("PassThrough", "no") != "yes"]
        kept_truth = [truth[i] for i in keep]
        ga = grouping_accuracy(ids, truth)
        ga_kept = grouping_accuracy([ids[i] for i in keep], kept_truth) if keep else ga
        base = grouping_accuracy(naive, truth)
        base_kept = grouping_accuracy([naive[i] for i in keep], kept_truth) if keep else base
        for k, v in (("ga", ga), ("kept", ga_kept), ("base", base), ("base_kept", base_kept)):
            cols[k].append(v)
        rows.append(
            [
                folder.name,
                len(recs),
                len(recs) - len(keep),
                len(set(truth)),
                len(set(ids)),
                ga,
                ga_kept,
                len(set(naive)),
                base,
                base_kept,
                round(len(recs) / max(dt, 1e-9)),
                round(len(recs) / max(cpu, 1e-9)),
            ]
        )
    n = len(rows)
    mean = lambda k: sum(cols[k]) / n  # noqa: E731
    rows.append(["mean", "", "", "", "", mean("ga"), mean("kept"), "", mean("base"), mean("base_kept"), "", ""])
    return rows


SYSTEMS_HEADER = [
    "system",
    "lines",
    "pass-through lines",
    "true groups",
    "signatures",
    "GA",
    "GA without pass-through",
    "naive groups",
    "naive GA",
    "naive GA without pass-through",
    "messages/s",
    "messages/s of CPU",
]


# -- leave-one-system-out: every choice made on the other systems, scored on the held-out one ---------------
def _variants():
    """The method's choices, as (name, apply) pairs: the miner's similarity threshold, method 25's evidence rules
    (``EVIDENCE`` distinct words before a position is a variable, ``MIN_CONSTANT`` constant tokens a generalisation
    keeps) and each optional part of the masking/grouping switched off. ``apply`` sets them and returns an undo."""
    import harness_memory.error_signatures as es

    miner = es.TemplateMiner
    flags = ("_KEEP_QUOTES", "_SCOPED_NAMES", "_REPR_ROUNDS", "_STRUCTURED", "_RANDOM_IDS", "VALUE_RUN")
    # the miner's settings a variant sets (VARLEN_WORDS since method 38, VALUE_WORDS 39, VARIABLE_FIRST and
    # CONTEXT_LABEL 40: an older checkout lacks them, and a variant leaves what it lacks alone)
    knobs = ("EVIDENCE", "MIN_CONSTANT", "VARLEN_WORDS", "VALUE_WORDS", "VARIABLE_FIRST", "CONTEXT_LABEL")

    def make(
        threshold,
        drop=None,
        optional=True,
        varlen=True,
        evidence=4,
        min_constant=1,
        varlen_words=1,
        values=None,
        variable_first=True,
        context_label=True,
        **off,
    ):
        def apply():
            saved = (
                es.DEFAULT_THRESHOLD,
                list(es._MASK_GUARDS),
                es._OPTIONAL,
                miner._neighbour,
                {f: getattr(es, f) for f in flags if hasattr(es, f)},  # (an older checkout may lack one)
                {k: getattr(miner, k) for k in knobs if hasattr(miner, k)},
            )
            want = {
                "EVIDENCE": evidence,
                "MIN_CONSTANT": min_constant,
                "VARLEN_WORDS": varlen_words,
                "VARIABLE_FIRST": variable_first,
                "CONTEXT_LABEL": context_label,
            }
            if values is not None:
                want["VALUE_WORDS"] = frozenset(values)
            es.DEFAULT_THRESHOLD = threshold
            for k, v in want.items():
                if k in saved[-1]:
                    setattr(miner, k, v)
            for f, v in off.items():
                setattr(es, f, v)
            if drop is not None:
                es._MASK_GUARDS[:] = [g for g in es._MASK_GUARDS if g[0].pattern not in drop()]
            if not optional:
                es._OPTIONAL = re.compile(r"(?!x)x")
            if not varlen:
                miner._neighbour = lambda self, tokens, frame: None

            def undo():
                es.DEFAULT_THRESHOLD, guards, es._OPTIONAL, miner._neighbour, fl, kn = saved
                for k, v in kn.items():
                    setattr(miner, k, v)
                for f, v in fl.items():
                    setattr(es, f, v)
                es._MASK_GUARDS[:] = guards

            return undo

        return apply

    hosts = lambda: {es._HOST.pattern, es._HOST_PORT.pattern}  # noqa: E731 - host names and host:port
    units = lambda: {es._UNITS.pattern}  # noqa: E731 - durations and sizes
    dates = lambda: {es._DATE_WORDS.pattern}  # noqa: E731 - dates with a month's name
    out = []
    for t in (0.6, 0.7, 0.8):
        for ev in (2, 3, 4):
            for mc in (0, 1, 2):
                out.append((f"t={t} evidence={ev} min-constant={mc}", make(t, evidence=ev, min_constant=mc)))
    t = DEFAULT_VARIANT_THRESHOLD
    out.append((f"t={t} no-hosts", make(t, drop=hosts)))
    out.append((f"t={t} no-units", make(t, drop=units)))
    out.append((f"t={t} no-dates", make(t, drop=dates)))
    out.append((f"t={t} no-optional", make(t, optional=False)))
    out.append((f"t={t} no-varlen", make(t, varlen=False)))
    out.append((f"t={t} varlen-words=0", make(t, varlen_words=0)))  # method 38's word a variable-length join needs
    out.append((f"t={t} no-quotes-kept", make(t, _KEEP_QUOTES=False)))
    out.append((f"t={t} no-scoped-names", make(t, _SCOPED_NAMES=False)))
    out.append((f"t={t} no-reprs", make(t, _REPR_ROUNDS=0)))
    out.append((f"t={t} no-structured", make(t, _STRUCTURED=False)))  # method 38's structured values
    out.append((f"t={t} no-random-ids", make(t, _RANDOM_IDS=False)))  # method 39's identifiers of letters
    for kind in ("slash", "plural"):  # method 39's words that are values by their form, each kind left out
        out.append((f"t={t} no-{kind}-words", make(t, values={"slash", "plural"} - {kind})))
    out.append((f"t={t} no-variable-first", make(t, variable_first=False)))  # method 40's partition key
    out.append((f"t={t} no-context-label", make(t, context_label=False)))  # method 40's leading bracketed label
    for run in (None, 2, 4):  # method 41's run of variables that is one variable (3 shipped)
        out.append((f"t={t} value-run={run}", make(t, VALUE_RUN=run)))
    return out


DEFAULT_VARIANT_THRESHOLD = 0.7
SHIPPED = "t=0.7 evidence=4 min-constant=1"  # the shipped configuration (method 25)


def _ga_of(folder: Path, tmp: Path) -> float:
    import harness_memory.error_signatures as es

    recs = read_structured(folder)
    db = tmp / f"loo-{folder.name}-{time.perf_counter_ns()}.db"
    with MemoryStore(db) as s:
        s._core.miner.threshold = es.DEFAULT_THRESHOLD
        ids = canonical(s, [s.error_signature(r["Content"]).id for r in recs])
    db.unlink()
    return grouping_accuracy(ids, [r["EventId"] for r in recs])


def loo_pool(data: Path, extra: Path | Sequence[Path] | None) -> dict[str, Path]:
    """The systems of a leave-one-system-out: the 8 of loghub-2k, plus every system folder under ``extra`` (one
    folder or several)."""
    pool = {system: data / "loghub-2k" / system for system in SYSTEMS}
    extras = [] if extra is None else [extra] if isinstance(extra, Path) else list(extra)
    for parent in extras:
        for folder in sorted(parent.iterdir()):
            if folder.is_dir() and any(folder.glob("*_2k.log_structured.csv*")):
                pool[folder.name] = folder
    return pool


def leave_one_system_out(data: Path, tmp: Path, extra: Path | Sequence[Path] | None = None):
    """For each system: the variant with the best mean GA on all the others (ties: the shipped one), scored on it;
    beside the shipped configuration's GA on it (in-sample) and the best variant for it alone."""
    pool = loo_pool(data, extra)
    variants = _variants()
    ga: dict[str, dict[str, float]] = {}
    for name, apply in variants:
        undo = apply()
        try:
            ga[name] = {system: _ga_of(folder, tmp) for system, folder in pool.items()}
        finally:
            undo()
    rows, held, insample = [], [], []
    for system in pool:
        others = [x for x in pool if x != system]
        chosen = max(ga, key=lambda n: (sum(ga[n][o] for o in others), n == SHIPPED))
        held.append(ga[chosen][system])
        insample.append(ga[SHIPPED][system])
        best_here = max(ga, key=lambda n: ga[n][system])
        rows.append([system, chosen, ga[chosen][system], ga[SHIPPED][system], best_here, ga[best_here][system]])
    dev = [i for i, x in enumerate(pool) if x in SYSTEMS]
    own = [i for i, x in enumerate(pool) if x not in SYSTEMS]
    rows.append(["mean", "", sum(held) / len(held), sum(insample) / len(insample), "", ""])
    if own:
        for label, idx in (("mean of loghub-2k's 8", dev), (f"mean of the other {len(own)}", own)):
            rows.append(
                [label, "", sum(held[i] for i in idx) / len(idx), sum(insample[i] for i in idx) / len(idx), "", ""]
            )
    ranking = sorted(ga, key=lambda n: -sum(ga[n].values()))[:5]
    return rows, [[n, sum(ga[n].values()) / len(pool)] for n in ranking]


def defects4j(data: Path, tmp: Path):
    recs = [json.loads(ln) for ln in (data / "defects4j-traces" / "traces-dev.jsonl").open(encoding="utf-8")]
    by_project = collections.defaultdict(list)
    for r in recs:
        by_project[r["project"]].append(r)
    rows, all_pred, all_truth = [], [], []
    per_protocol: dict[str, list[tuple[str, bool, bool]]] = collections.defaultdict(list)
    analysis: list[list] = []
    kinds: collections.Counter = collections.Counter()
    for project, rs in sorted(by_project.items()):
        with MemoryStore(tmp / f"d4j-{project}.db") as s:
            ids = canonical(s, [s.error_signature(r["trace"]).id for r in rs])
            truth = [r["group"] for r in rs]
            all_pred += [f"{project}/{i}" for i in ids]
            all_truth += truth
            rows.append(
                [
                    project,
                    len(rs),
                    len(set(truth)),
                    len(set(ids)),
                    grouping_accuracy(ids, truth),
                    pairwise_f1(ids, truth),
                    adjusted_rand_score(truth, ids),
                ]
            )
            analysis.append([project, *_split_merge(truth, ids)])
            # recall, the benchmark's protocol: a failure memory for every bug (its first trace), every other
            # trace of a bug a query
            got = _same_bug_recall(s, project, rs, multi_only=False, every_other=True)
            for _g, h1, r5, kind in got:
                per_protocol["every bug's memory, every other trace a query"].append((project, h1, r5))
                kinds[kind, h1] += 1
        # the data README's protocol: memories only for the bugs with more than one trace, one query per bug
        # (its second trace); a fresh store that has signed the same traces
        with MemoryStore(tmp / f"d4j-{project}-readme.db") as s:
            for r in rs:
                s.error_signature(r["trace"])
            for _g, h1, r5, _ in _same_bug_recall(s, project, rs, multi_only=True, every_other=False):
                per_protocol["memories of bugs with >1 trace, one query per bug"].append((project, h1, r5))
    rows.append(
        [
            "mean of projects",
            "",
            "",
            "",
            sum(r[4] for r in rows) / len(rows),
            sum(r[5] for r in rows) / len(rows),
            sum(r[6] for r in rows) / len(rows),
        ]
    )
    rows.append(
        [
            "all (pooled)",
            len(recs),
            len(set(all_truth)),
            len(set(all_pred)),
            grouping_accuracy(all_pred, all_truth),
            pairwise_f1(all_pred, all_truth),
            adjusted_rand_score(all_truth, all_pred),
        ]
    )
    n = len(analysis)
    analysis.append(["mean of projects", "", "", *(sum(a[k] for a in analysis) / n for k in (3, 4, 5))])
    kind_rows = [
        [k, kinds[k, True] + kinds[k, False], kinds[k, True] / max(1, kinds[k, True] + kinds[k, False])]
        for k in ("its bug's only", "its bug's, shared with other bugs", "another bug's", "new")
    ]
    recall_rows = []
    for name, got in per_protocol.items():
        by_project = collections.defaultdict(list)
        for project, h1, _ in got:
            by_project[project].append(h1)
        recall_rows.append(
            [
                name,
                len(got),
                sum(h for _, h, _ in got) / max(1, len(got)),
                sum(r for _, _, r in got) / max(1, len(got)),
                sum(sum(v) / len(v) for v in by_project.values()) / max(1, len(by_project)),
            ]
        )
    return rows, recall_rows, (analysis, kind_rows)


def _same_bug_recall(s: MemoryStore, project: str, rs: list[dict], *, multi_only: bool, every_other: bool) -> list:
    """One failure memory per bug (its first trace; with ``multi_only`` only for bugs with more than one
    trace), queried with the bug's other traces (``every_other``) or its second trace only:
    ``[(bug, hit@1, in top 5, how the query's signature relates to its bug's memory's)]``."""
    count = collections.Counter(r["group"] for r in rs)
    first: dict[str, dict] = {}
    for r in rs:
        first.setdefault(r["group"], r)
    memory_of: dict[int, str] = {}
    sig_of_bug: dict[str, str] = {}
    bugs_of_sig: dict[str, set] = collections.defaultdict(set)
    for g, r in first.items():
        if multi_only and count[g] < 2:
            continue
        trace = r["trace"][:30000]
        sig = s.error_signature(trace)
        # what a harness would store: the failing test, the failure excerpt, where it failed
        m = s.remember(
            f"{r['test']} failed: {sig.excerpt} (at {sig.frame})",
            type="failure",
            agent_id="ci",
            namespace=project,
            error=trace,
            metadata={"group": g},
        )
        memory_of.setdefault(m.id, g)
        own = s._core.miner.canonical(sig.id)
        sig_of_bug[g] = own
        bugs_of_sig[own].add(g)
    out, asked = [], set()
    for r in rs:
        g = r["group"]
        if first[g] is r or g not in sig_of_bug or (not every_other and g in asked):
            continue
        asked.add(g)
        sig = s.error_signature(r["trace"][:30000])
        hits = s.recall(
            f"{r['test']} failed: {sig.excerpt} (at {sig.frame})",
            agent_id="ci",
            namespace=project,
            error=r["trace"][:30000],
            types=["failure"],
            limit=5,
            record=False,
        )
        got = [memory_of.get(h.memory.id) for h in hits]
        qsig = s._core.miner.canonical(sig.id)
        kind = (
            ("its bug's, shared with other bugs" if len(bugs_of_sig[qsig]) > 1 else "its bug's only")
            if qsig == sig_of_bug[g]
            else "another bug's"
            if qsig in bugs_of_sig
            else "new"
        )
        out.append((g, bool(got) and got[0] == g, g in got, kind))
    return out


# -- Defects4J leave-one-project-out: each choice of signing method 10 made on 8 projects, scored on the 9th --
_OPTIONAL_BEFORE_10 = r"\s?[(\[](?:<\*>[\s,;/]{0,3}){1,8}[)\]]|(?:(?<=\s)|^)[(\[]\s{0,3}[)\]]"


# the module attributes the Defects4J variants switch (besides TemplateMiner.sign), restored by their undo
_D4J_SWITCHED = ("_OPTIONAL", "throw_site", "failing_test", "thrower", "compared_difference")


def _d4j_variants():
    """(name, apply) pairs: the choices of signing methods 10 and 16 switched on and off (the shipped one first).
    ``apply`` returns an undo."""
    import harness_memory.error_signatures as es

    def make(
        joins: bool, signed_optional: bool, sites: bool, tests: bool = True, classes: bool = True, diffs: bool = True
    ):
        def apply():
            sign_before = es.TemplateMiner.sign
            saved = {name: getattr(es, name) for name in _D4J_SWITCHED}
            if not joins:
                sign = es.TemplateMiner.sign
                es.TemplateMiner.sign = lambda self, tokens, frame, category, exception, joins=(): sign(
                    self, tokens, frame, category, exception
                )
            if not signed_optional:
                es._OPTIONAL = re.compile(_OPTIONAL_BEFORE_10)
            if not sites:
                es.throw_site = lambda ex: None
            if not tests:
                es.failing_test = lambda ex: None
            if not classes:
                es.thrower = lambda ex: None
            if not diffs:
                es.compared_difference = lambda ex: None

            def undo():
                es.TemplateMiner.sign = sign_before
                for name, value in saved.items():
                    setattr(es, name, value)

            return undo

        return apply

    return [
        (
            "method 21 (test-method, throw-site, failing-test, thrower and compared-difference joins, signed optional "
            "parts)",
            make(True, True, True),
        ),
        ("method 18 (no compared-difference joins)", make(True, True, True, True, True, False)),
        ("method 17 (no thrower joins)", make(True, True, True, True, False, False)),
        ("method 16 (no failing-test or thrower joins)", make(True, True, True, False, False, False)),
        ("method 10 (no throw-site, failing-test or thrower joins)", make(True, True, False, False, False, False)),
        ("no joins", make(False, True, False, False, False, False)),
        ("optional parts unsigned, all joins", make(True, False, True)),
        ("neither (method 9)", make(False, False, False, False, False, False)),
    ]


def d4j_leave_one_project_out(data: Path, tmp: Path):
    recs = [json.loads(ln) for ln in (data / "defects4j-traces" / "traces-dev.jsonl").open(encoding="utf-8")]
    by_project = collections.defaultdict(list)
    for r in recs:
        by_project[r["project"]].append(r)
    projects = sorted(by_project)
    ari: dict[str, dict[str, float]] = {}
    for name, apply in _d4j_variants():
        undo = apply()
        try:
            ari[name] = {}
            for project in projects:
                rs = by_project[project]
                with MemoryStore(tmp / f"d4j-loo-{project}-{time.perf_counter_ns()}.db") as s:
                    ids = canonical(s, [s.error_signature(r["trace"]).id for r in rs])
                ari[name][project] = adjusted_rand_score([r["group"] for r in rs], ids)
        finally:
            undo()
    shipped = next(iter(ari))
    rows, held, held_against = [], [], []
    for project in projects:
        others = [p for p in projects if p != project]
        chosen = max(ari, key=lambda n: (sum(ari[n][o] for o in others), n == shipped))
        # a tie on the other 8 is no evidence for the shipped setting: the held-out figure with ties broken
        # against it too (the first other setting of the tie)
        against = max(ari, key=lambda n: (sum(ari[n][o] for o in others), n != shipped))
        held.append(ari[chosen][project])
        held_against.append(ari[against][project])
        rows.append([project, chosen, ari[chosen][project], ari[against][project], *(ari[n][project] for n in ari)])
    n = len(projects)
    rows.append(["mean", "", sum(held) / n, sum(held_against) / n, *(sum(ari[v].values()) / n for v in ari)])
    return [
        "project",
        "chosen on the other 8",
        "ARI held-out",
        "held-out, ties against the shipped",
        *(f"ARI: {v}" for v in ari),
    ], rows


def _split_merge(truth: list[str], ids: list[str]) -> list:
    """Split pairs, merged pairs, ARI now, ARI with every merge removed, ARI with every split removed."""
    split = merged = 0
    for (g1, s1), (g2, s2) in combinations(zip(truth, ids), 2):
        split += g1 == g2 and s1 != s2
        merged += g1 != g2 and s1 == s2
    refined = [f"{s}|{g}" for g, s in zip(truth, ids)]  # no two bugs share a signature
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    first_of: dict[str, str] = {}
    for g, sig in zip(truth, ids):  # join the signatures of one bug
        a, b = root(first_of.setdefault(g, sig)), root(sig)
        if a != b:
            parent[b] = a
    joined = [root(sig) for sig in ids]
    return [
        split,
        merged,
        adjusted_rand_score(truth, ids),
        adjusted_rand_score(truth, refined),
        adjusted_rand_score(truth, joined),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=None)
    ap.add_argument("--loo", action="store_true", help="also: leave-one-system-out choice of the settings")
    ap.add_argument(
        "--loo-systems",
        default=None,
        nargs="+",
        help="with --loo: also hold out each system folder under these (e.g. tests/fixtures/system_logs "
        "tests/fixtures/system_logs_sealed), choosing on all the others",
    )
    ap.add_argument("--d4j-only", action="store_true", help="only the Defects4J tables (no loghub)")
    ap.add_argument("--d4j-analysis", action="store_true", help="also: the error analysis of the Defects4J figures")
    ap.add_argument(
        "--d4j-loo",
        action="store_true",
        help="also: leave-one-project-out choice of the signing methods' join settings",
    )
    ap.add_argument(
        "--systems",
        default=None,
        help="only: grouping accuracy on every <System>/<System>_2k.log_structured.csv[.gz] under this folder "
        "(e.g. tests/fixtures/system_logs), with the naive baseline (digits masked, whitespace tokens)",
    )
    ap.add_argument("--limit", type=int, default=None, help="with --systems: the first N lines of each system")
    args = ap.parse_args()
    if args.systems:
        with tempfile.TemporaryDirectory() as d:
            print(
                table(
                    f"grouping accuracy on {args.systems} (one configuration, online, file order; the naive "
                    "baseline in the same run)",
                    SYSTEMS_HEADER,
                    systems_table(Path(args.systems), Path(d), args.limit),
                )
            )
        return
    data = data_dir(args.data)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.loo:
            extra = [Path(p) for p in args.loo_systems] if args.loo_systems else None
            loo_rows, top = leave_one_system_out(data, tmp, extra)
            n = len(loo_pool(data, extra))
            print(
                table(
                    f"leave-one-system-out over {n} systems: settings chosen on the other {n - 1} systems, scored on "
                    f"this one (in-sample = the shipped configuration {SHIPPED}, all masks)",
                    [
                        "held-out system",
                        "chosen on the other 7",
                        "GA held-out",
                        "GA in-sample (shipped)",
                        "best for this system alone",
                        "its GA",
                    ],
                    loo_rows,
                )
            )
            print(table(f"the best variants over all {n} systems (mean GA)", ["variant", "mean GA"], top))
        if not args.d4j_only:
            print(
                table(
                    "loghub-2k grouping accuracy (one configuration, online, file order)",
                    ["system", "lines", "true groups", "signatures", "GA", "messages/s", "messages/s of CPU"],
                    loghub(data, tmp),
                )
            )
        if args.d4j_loo:
            header, loo_rows = d4j_leave_one_project_out(data, tmp)
            print(
                table(
                    "Defects4J leave-one-project-out: the settings of methods 10, 16, 17, 18 and 21 chosen on the other 8 projects (ARI)",
                    header,
                    loo_rows,
                )
            )
        rows, recall_rows, (analysis, kind_rows) = defects4j(data, tmp)
        print(
            table(
                "Defects4J trace signatures vs bug groups",
                ["project", "traces", "bugs", "signatures", "GA", "pairwise F1", "ARI"],
                rows,
            )
        )
        print(
            table(
                "Defects4J same-bug recall (a failure memory per bug, queried with another trace of the bug); "
                "hit@1 pooled over the queries and the mean of the projects' hit@1",
                ["protocol", "queries", "hit@1", "recall@5", "hit@1, mean of projects"],
                recall_rows,
            )
        )
        if args.d4j_analysis:
            print(
                table(
                    "Defects4J error analysis: pairs a signature splits (same bug) and merges (two bugs), and the "
                    "ARI with every merge removed / every split removed",
                    ["project", "split pairs", "merged pairs", "ARI", "ARI, no merges", "ARI, no splits"],
                    analysis,
                )
            )
            print(
                table(
                    "Defects4J recall queries by their signature (against their bug's memory's)",
                    ["the query's signature is", "queries", "hit@1"],
                    kind_rows,
                )
            )


if __name__ == "__main__":
    main()
