"""Failure excerpts of whole CI logs: does `error_signature` find the decisive lines, and categorise them?

    python benchmarks/ci_logs.py                      # dev, heldout, heldout2 ... heldout26 and all
    python benchmarks/ci_logs.py --split dev --misses # only dev, and list the logs it misses

Corpus: tests/fixtures/ci_logs (real tool output of broken projects, plain or wrapped the way
GitHub Actions, `gh run view --log`, Jenkins and GitLab print it; see its README.md), with the
decisive failure lines and a category marked by hand in labels.json. Each log is read as bytes
(gunzipped for .log.gz), decoded as UTF-8 (errors="replace") and signed with
`MemoryStore.error_signature(text)`. Line numbers are those of `text.split("\\n")`, 1-based.

- excerpt hit rate: share of logs whose excerpt line span overlaps a marked span;
- category accuracy: share of logs whose signature category equals the label.

Two naive baselines are measured in the same run: the FIRST and the LAST "error-looking" line
(ERROR_LOOKING below), categorised by the library's rules (``categorize``) on that one line.
The library's category is the signature's: the rules, and where they answer ``unknown`` the learned fallback
(harness_memory/category_model.py); ``--no-model`` measures the rules alone.
Targets: hit rate >= 0.85 and well above both baselines (at least 0.15 above the better one),
category accuracy >= 0.85.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import table
from harness_memory import MemoryStore, category_model
from harness_memory.error_signatures import Excerpt, categorize

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "ci_logs"
ERROR_LOOKING = re.compile(
    r"(?i)\b(?:error|errors|fatal|failed|failure|exception|panic|traceback|timed out|timeout|denied|refused|"
    r"not found|cannot|can't|unable|killed|abort(?:ed)?)\b|npm ERR!"
)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\(B")
TARGET_HIT = TARGET_CAT = 0.85
MARGIN = 0.15  # "well above" the better baseline
SPLITS = [
    "dev",
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
    "heldout9",
    "heldout10",
    "heldout11",
    "heldout12",
    "heldout13",
    "heldout14",
    "heldout15",
    "heldout16",
    "heldout17",
    "heldout18",
    "heldout19",
    "heldout20",
    "heldout21",
    "heldout22",
    "heldout23",
    "heldout24",
    "heldout25",
    "heldout26",
    "heldout27",
    "heldout28",
    "heldout29",
    "heldout30",
    "heldout31",
]


@dataclass
class Result:
    path: str
    family: str
    wrapper: str
    split: str
    truth: str
    spans: list[tuple[int, int]]
    lines: int
    size: int
    seconds: float
    lib_span: tuple[int, int] | None
    lib_cat: str
    lib_fallback: bool
    excerpt: str
    first_span: tuple[int, int] | None
    first_cat: str
    last_span: tuple[int, int] | None
    last_cat: str

    def hit(self, span) -> bool:
        return span is not None and any(span[0] <= e and s <= span[1] for s, e in self.spans)


def read_log(path: Path) -> str:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def locate(excerpt: str, lines: list[str]) -> tuple[int, int] | None:
    # FALLBACK, used only while ErrorSignature has no `excerpt_lines`: the first log line that
    # contains the excerpt's first (non-blank) line, spanning as many lines as the excerpt has.
    ex = [ln for ln in excerpt.split("\n") if ln.strip()]
    if not ex:
        return None
    for needle, hay in ((ex[0].strip(), lines), (ANSI.sub("", ex[0]).strip(), [ANSI.sub("", ln) for ln in lines])):
        for i, ln in enumerate(hay):
            if needle and needle in ln:
                return (i + 1, min(len(lines), i + len(ex)))
    return None


def baseline(lines: list[str], last: bool) -> tuple[tuple[int, int] | None, str]:
    order = range(len(lines) - 1, -1, -1) if last else range(len(lines))
    for i in order:
        if ERROR_LOOKING.search(lines[i]):
            return (i + 1, i + 1), categorize(Excerpt(message=lines[i]))
    return None, "unknown"


def run(corpus: Path, labels: dict, store: MemoryStore) -> list[Result]:
    out = []
    for rel, lab in labels.items():
        path = corpus / rel
        text = read_log(path)
        lines = text.split("\n")
        t0 = time.perf_counter()
        sig = store.error_signature(text)
        dt = time.perf_counter() - t0
        if hasattr(sig, "excerpt_lines"):
            span, fallback = (tuple(sig.excerpt_lines) if sig.excerpt_lines else None), False
        else:
            span, fallback = locate(sig.excerpt, lines), True
        first, first_cat = baseline(lines, last=False)
        last, last_cat = baseline(lines, last=True)
        out.append(
            Result(
                rel,
                lab["family"],
                lab["wrapper"],
                lab["split"],
                lab["category"],
                [tuple(s) for s in lab["lines"]],
                len(lines),
                len(text.encode("utf-8")),
                dt,
                span,
                sig.category,
                fallback,
                sig.excerpt,
                first,
                first_cat,
                last,
                last_cat,
            )
        )
    return out


def rates(rs: list[Result]) -> list:
    n = len(rs)
    return [
        n,
        sum(r.hit(r.lib_span) for r in rs) / n,
        sum(r.hit(r.first_span) for r in rs) / n,
        sum(r.hit(r.last_span) for r in rs) / n,
        sum(r.lib_cat == r.truth for r in rs) / n,
        sum(r.first_cat == r.truth for r in rs) / n,
        sum(r.last_cat == r.truth for r in rs) / n,
    ]


HEADER = [
    "",
    "logs",
    "hit: library",
    "hit: first err line",
    "hit: last err line",
    "cat: library",
    "cat: first err line",
    "cat: last err line",
]


def report(title: str, rs: list[Result]) -> None:
    if not rs:
        return
    for key, name in (("family", "family"), ("wrapper", "wrapper")):
        groups = collections.defaultdict(list)
        for r in rs:
            groups[getattr(r, key)].append(r)
        rows = [[g, *rates(groups[g])] for g in sorted(groups)]
        if key == "family":
            rows.append(["ALL", *rates(rs)])
        print(table(f"{title}: by {name}", [name] + HEADER[1:], rows))
    _, hit, hit_first, hit_last, cat, *_ = rates(rs)
    ok_hit = hit >= TARGET_HIT and hit >= max(hit_first, hit_last) + MARGIN
    print(
        f"{title}: excerpt hit {hit:.3f} (target >= {TARGET_HIT} and well above baselines "
        f"{hit_first:.3f} / {hit_last:.3f}: {'met' if ok_hit else 'NOT met'}); "
        f"category {cat:.3f} (target >= {TARGET_CAT}: {'met' if cat >= TARGET_CAT else 'NOT met'})\n"
    )


def fifty_mib(corpus: Path, labels: dict, size_mib: int) -> None:
    """One whole log of ``size_mib`` MiB: the largest corpus log's passing part repeated, then its
    real ending. Timed end to end through the public API (median of 3, a fresh store each), beside
    a baseline measured in the same run: one pass of ``str.splitlines()`` over the same text."""
    import statistics
    import time

    rel = max(labels, key=lambda r: (corpus / r).stat().st_size)
    text = read_log(corpus / rel)
    head, tail = text[: len(text) * 9 // 10], text[len(text) * 9 // 10 :]
    head = head[: head.rfind("\n") + 1]
    reps = max(1, (size_mib * 2**20 - len(tail)) // max(1, len(head)))
    big = head * reps + tail
    times, base = [], []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as d, MemoryStore(Path(d) / "big.db") as store:
            t0 = time.perf_counter()
            sig = store.error_signature(big)
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        big.splitlines()
        base.append(time.perf_counter() - t0)
    t, b = statistics.median(times), statistics.median(base)
    print(
        f"\n{len(big) / 2**20:.1f} MiB log ({rel} x{reps} + its ending, {big.count(chr(10)):,} lines): signed in "
        f"{t:.2f} s (target < 2 s) = {len(big) / 2**20 / t:.0f} MiB/s; baseline str.splitlines() {b:.2f} s; "
        f"ratio {t / b:.2f}x; excerpt lines {sig.excerpt_lines}, category {sig.category}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="folder holding labels.json and the logs")
    ap.add_argument(
        "--split",
        choices=[*SPLITS, "all"],
        default="all",
        help="all (default) prints each split and all separately",
    )
    ap.add_argument("--misses", action="store_true", help="list the logs whose excerpt or category is wrong")
    ap.add_argument("--size-mib", type=int, default=50, help="also time one log of this size (0: skip)")
    ap.add_argument(
        "--no-model",
        action="store_true",
        help="sign with the rules alone (category_model.ENABLED = False): no learned fallback for `unknown`",
    )
    args = ap.parse_args()
    if args.no_model:
        category_model.ENABLED = False
    print(f"learned category fallback: {'off' if args.no_model else 'on'}\n")
    corpus = Path(args.corpus)
    if not (corpus / "labels.json").exists():
        sys.exit(f"no labels.json in {corpus}")
    labels = json.loads((corpus / "labels.json").read_text(encoding="utf-8"))
    if args.split != "all":
        labels = {k: v for k, v in labels.items() if v["split"] == args.split}

    with tempfile.TemporaryDirectory() as d, MemoryStore(Path(d) / "ci_logs.db") as store:
        store.error_signature("warm-up: ValueError: x")
        rs = run(corpus, labels, store)

    if any(r.lib_fallback for r in rs):
        print(
            "NOTE: ErrorSignature has no `excerpt_lines` yet; the library's span is located by searching the "
            "log for the excerpt's first line (fallback).\n"
        )
    splits = SPLITS if args.split == "all" else [args.split]
    for sp in splits:
        report(sp, [r for r in rs if r.split == sp])
    if args.split == "all":
        report("all", rs)

    total_mib = sum(r.size for r in rs) / 2**20
    total_s = sum(r.seconds for r in rs)
    big = max(rs, key=lambda r: r.size)
    print(
        f"signing throughput: {total_mib:.2f} MiB in {total_s:.2f} s = {total_mib / max(total_s, 1e-9):.2f} MiB/s; "
        f"largest log {big.path} ({big.size / 2**20:.2f} MiB, {big.lines} lines): {big.seconds:.3f} s"
    )

    if args.size_mib:
        fifty_mib(corpus, labels, args.size_mib)

    if args.misses:
        print("\nmisses (marked spans | library span, category):")
        for r in rs:
            if not r.hit(r.lib_span) or r.lib_cat != r.truth:
                ex = ANSI.sub("", r.excerpt.split("\n")[0])[:100]
                print(
                    f"  [{r.split}] {r.path}: marked {r.spans} truth={r.truth} | got {r.lib_span} {r.lib_cat}"
                    f"{' (fallback span)' if r.lib_fallback else ''}: {ex!r}"
                )


if __name__ == "__main__":
    main()
