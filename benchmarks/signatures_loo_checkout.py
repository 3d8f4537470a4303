"""Leave-one-system-out of an OLDER checkout's signing, over the same pool as ``signatures.py --loo --loo-systems``:
loghub-2k's 8 systems plus every system folder under DIR, each held out in turn, the older checkout's own ``--loo``
variants (its ``_variants()``) chosen on the others. For the before/after of a signing method whose own
``signatures.py`` has no ``--loo-systems`` (docs/benchmarks.md, method 25).

    WT=$(mktemp -d) && git archive 6767431 | tar -x -C "$WT"
    PYTHONPATH="$WT" python benchmarks/signatures_loo_checkout.py "$WT" tests/fixtures/system_logs --data ../shared/data
"""

import sys
import tempfile
import time
from pathlib import Path

root = Path(sys.argv[1])
sys.path.insert(0, str(root / "benchmarks"))
DATA = Path(sys.argv[sys.argv.index("--data") + 1] if "--data" in sys.argv else "../shared/data") / "loghub-2k"

import harness_memory.error_signatures as es  # noqa: E402 - the checkout's, through PYTHONPATH
import signatures as S  # noqa: E402 - the checkout's benchmark (its _variants)
from harness_memory import MemoryStore  # noqa: E402

pool = {s: DATA / s for s in S.SYSTEMS}
for f in sorted(Path(sys.argv[2]).iterdir()):
    if f.is_dir() and any(f.glob("*_2k.log_structured.csv*")):
        pool[f.name] = f


def ga_of(folder, tmp):
    recs = S.read_structured(folder)
    db = tmp / f"x-{time.perf_counter_ns()}.db"
    with MemoryStore(db) as s:
        s._core.miner.threshold = es.DEFAULT_THRESHOLD
        ids = S.canonical(s, [s.error_signature(r["Content"]).id for r in recs])
    db.unlink()
    return S.grouping_accuracy(ids, [r["EventId"] for r in recs])


ga = {}
with tempfile.TemporaryDirectory() as d:
    for name, apply in S._variants():
        undo = apply()
        try:
            ga[name] = {s: ga_of(f, Path(d)) for s, f in pool.items()}
        finally:
            undo()
default = "t=0.7"
held, ins = [], []
for s in pool:
    others = [x for x in pool if x != s]
    ch = max(ga, key=lambda n: (sum(ga[n][o] for o in others), n == default))
    held.append(ga[ch][s])
    ins.append(ga[default][s])
    print(f"{s:12s} chosen {ch:18s} held-out {ga[ch][s]:.3f} in-sample {ga[default][s]:.3f}")
dev = [i for i, x in enumerate(pool) if x in S.SYSTEMS]
own = [i for i, x in enumerate(pool) if x not in S.SYSTEMS]
for lab, idx in (("all 13", range(len(pool))), ("loghub 8", dev), ("own 5", own)):
    print(
        f"mean {lab}: held-out {sum(held[i] for i in idx) / len(idx):.3f} in-sample {sum(ins[i] for i in idx) / len(idx):.3f}"
    )
