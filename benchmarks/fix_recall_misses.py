"""Why fix recall misses: every asked failure of ``fix_recall.py``'s replay, classified (issue 19).

    python benchmarks/fix_recall_misses.py --data ../shared/data [--sources defects4j agent-runs]
                                           [--task run|command] [--json out.json]

The same replay as ``fix_recall.py`` (same split, ``learn_success`` teaching, ``apply(helpful=hit)``
credits after each answer, the library's default settings), with each asked failure examined just
before ``on_task_error`` answers it:

- a pair whose repair was taught (``seen``) and that the answer's first three miss is put in one class:
  *link exists* (a taught error of the same repair has the asked error's signature or one the template
  miner linked to it) and then why it was not among the first three: *abstained* (nothing offered: the
  signature's fixes never repeat, ``fix_distinct_min``, or a bound value differs), *listed under what did
  not work* (its net evidence on the link fell below 0.5: unhelpful credits) or *ranked below 3*; or
  *no link* (every taught error of that repair signed differently), by what the asked error still shares
  with the closest taught one: origin and key frame, origin only, key frame only, exception type only,
  nothing; and whether something else was offered instead;
- an asked failure whose repair was never taught, or that was never repaired, and got advice (false
  advice) is put in a class by the level of its first fix (exact, alias, task, origin, ...) and the
  number of fix kinds linked to its signature.

The BM25 baseline's hit@3 is given for each class (what text similarity recovers there). Prints one
table per source; ``--json`` writes every asked failure with its class.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fix_recall as fr
from _common import data_dir, table
from harness_memory import MemoryStore, Settings, fixes as fx


def classify(src: fr.Source, db: Path) -> list[dict]:
    store = MemoryStore(db, settings=Settings(**fr.SETTINGS))
    core = store._core
    teach = fr.Teacher(store, "learn_success")
    known: dict[str, str] = {}
    taught: dict[str, list] = collections.defaultdict(list)  # repair shape -> signatures of its taught errors
    bm25 = fr.BM25()
    for t in sorted((t for t in src.tasks if t.teach), key=lambda t: t.order):
        for c in t.cases:
            if c.repair is None:
                continue
            teach(c)
            known[c.repair.strip()] = c.repair_shape
            bm25.add(c.error, c.repair_shape)
            taught[c.repair_shape].append(core.sign(c.error))
    out = []
    for t in sorted((t for t in src.tasks if not t.teach), key=lambda t: t.order):
        for c in t.cases:
            s = core.sign(c.error)
            task = {"id": c.case_id, "title": fr.title_of(c), "agent_id": fr.AGENT}
            advice = store.on_task_error(task, c.error)
            fixes = [fr._memory(m) for m in advice.fixes]
            shapes = [src.answer_shape(m.content, known) for m in fixes]
            seen = c.repair_shape is not None and c.repair_shape in taught
            group = set(core.miner.group(s.id))
            n_kinds = core.backend.execute(
                f"SELECT COUNT(DISTINCT m.fix_kind) FROM fix_links l JOIN memories m ON m.id = l.memory_id "
                f"WHERE l.error_signature IN ({','.join('?' * len(group))})",
                tuple(group),
            ).fetchone()[0]
            hit = c.repair_shape is not None and c.repair_shape in shapes[:3]
            row = {
                "case": c.case_id,
                "truth": c.repair_shape,
                "answers": shapes[:3],
                "levels": [e.level for e in advice.fix_evidence][:3],
                "bm25_hit": c.repair_shape is not None and c.repair_shape in bm25.answer(c.error),
                "message": s.message[:200],
            }
            if seen and not hit:
                ts = taught[c.repair_shape]
                if any(x.id in group or core.miner.canonical(x.id) in group for x in ts):
                    tsig = store.task_signature(task)
                    ranked, failed = fx.rank(
                        core, s, agent_id=fr.AGENT, namespace=store.settings.namespace, limit=50, task_signature=tsig
                    )
                    if c.repair_shape in [src.answer_shape(e.memory.content, known) for e in ranked]:
                        cls = "link exists: ranked below 3"
                    elif c.repair_shape in [src.answer_shape(e.memory.content, known) for e in failed]:
                        cls = "link exists: listed under what did not work (net evidence < 0.5)"
                    else:
                        cls = "link exists: abstained (fixes never repeat, or a bound value differs)"
                else:
                    origin = any(x.origin and x.origin == s.origin for x in ts)
                    frame = any(x.frame and x.frame == s.frame for x in ts)
                    shared = (
                        "origin and key frame"
                        if origin and frame
                        else "origin"
                        if origin
                        else "key frame"
                        if frame
                        else "exception type"
                        if any(x.exception == s.exception for x in ts)
                        else "nothing"
                    )
                    cls = f"no link, shares {shared}; " + ("another fix offered" if shapes else "nothing offered")
            elif seen:
                cls = "hit"
            elif shapes:
                kind = "repair never taught" if c.repair_shape is not None else "never repaired"
                cls = f"false advice ({kind}): level {advice.fix_evidence[0].level}, {min(n_kinds, 3)}{'+' if n_kinds >= 3 else ''} kind(s) on the signature"
            else:
                cls = "quiet (repair never taught)" if c.repair_shape is not None else "quiet (never repaired)"
            row["class"] = cls
            out.append(row)
            for m, shp in list(zip(fixes, shapes))[:3]:
                try:
                    store.apply(m.id, helpful=shp == c.repair_shape, agent_id=fr.AGENT, task_id=c.case_id)
                except LookupError:
                    pass
    store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None)
    ap.add_argument("--sessions", type=Path, default=fr.SESSIONS)
    ap.add_argument(
        "--sources", nargs="+", default=["defects4j", "agent-runs"], choices=["agent-runs", "scripted", "defects4j"]
    )
    ap.add_argument("--task", choices=["command", "run"], default="run")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    fr.TASK = args.task
    data = data_dir(args.data) if {"agent-runs", "defects4j"} & set(args.sources) else None
    dump = {}
    with tempfile.TemporaryDirectory(prefix="fix-misses-") as tmp:
        for src in fr.load_sources(args.sources, data, args.sessions):
            rows = classify(src, Path(tmp) / f"{src.name}.db")
            dump[src.name] = rows
            count = collections.Counter(r["class"] for r in rows)
            bm = collections.Counter(r["class"] for r in rows if r["bm25_hit"])
            pairs = sum(r["truth"] is not None for r in rows)
            print(
                table(
                    f"{src.name} (--task {args.task}): {len(rows)} asked, {pairs} pairs",
                    ["class", "asked", "share of pairs", "BM25 hit@3 in class"],
                    [[k, n, n / max(1, pairs), bm[k]] for k, n in sorted(count.items(), key=lambda x: (-x[1], x[0]))],
                )
            )
            print()
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
