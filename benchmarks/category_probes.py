"""Category of failure lines of tools the CI corpus does not hold (tests/fixtures/category_probes/probes.json).

    python benchmarks/category_probes.py                 # this checkout
    python benchmarks/category_probes.py --before ab33f50 # ... and the library at a commit (git archive), side by side
    python benchmarks/category_probes.py --misses         # list the lines it gets wrong
    python benchmarks/category_probes.py --set probes_heldout --before ab33f50  # the held-out probe set

Each probe is one failure line (or two) copied from a public issue thread of a tool absent from
tests/fixtures/ci_logs (.NET, Zig, Deno, Bazel, gRPC, AWS and Google Cloud clients, Dart, Julia, Rust's
io::Error, MySQL, kubectl, Helm, Redis, Playwright, Swift, ssh/rsync, sbt), its source URL beside it, and a
category given by hand before the library was run on it (docs/signatures.md, "Category"). A probe is signed the
way signing reads a text: ``extract`` then ``categorize`` (the rules) and ``categorize_learned`` (the rules, then
the learned fallback where they say ``unknown``).

Two sets: ``probes.json`` (68 lines of 46 tools), written before the lexicon and read while building it (its
figure after is in-sample), and ``probes_heldout.json`` (38 lines of other threads), written and labelled after
the lexicon was committed and never used to change it (its figure is the held-out one).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE_DIR = ROOT / "tests" / "fixtures" / "category_probes"
_RUN = """
import json, sys
from harness_memory.failure_excerpt import extract
from harness_memory import error_signatures as es
probes = json.loads(sys.stdin.read())
out = []
for p in probes:
    ex = extract(p["text"])
    rules = es.categorize(ex)
    learned = es.categorize_learned(ex, rules) if hasattr(es, "categorize_learned") else rules
    out.append({"rules": rules, "learned": learned})
print(json.dumps(out))
"""


def run(lib: Path, probes: list[dict]) -> list[dict]:
    got = subprocess.run(
        [sys.executable, "-c", _RUN],
        input=json.dumps(probes),
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(lib), "PATH": "/usr/bin:/bin"},
        cwd=str(lib),
    )
    return json.loads(got.stdout)


def score(probes: list[dict], got: list[dict], key: str) -> float:
    return sum(g[key] == p["category"] for p, g in zip(probes, got, strict=True)) / len(probes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", help="a commit: its library is scored beside this checkout's")
    ap.add_argument("--misses", action="store_true", help="list the probes this checkout gets wrong")
    ap.add_argument(
        "--set",
        default="probes",
        help="probes (the development set) or probes_heldout (written after the lexicon was fixed, never tuned on)",
    )
    args = ap.parse_args()
    probes = json.loads((PROBE_DIR / f"{args.set}.json").read_text(encoding="utf-8"))
    rows = []
    if args.before:
        with tempfile.TemporaryDirectory() as d:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.before, "harness_memory"], check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", d], input=archive, check=True)
            before = run(Path(d), probes)
        rows.append((args.before, before))
    now = run(ROOT, probes)
    rows.append(("this checkout", now))
    print(f"{len(probes)} probes, {len({p['tool'] for p in probes})} tools")
    print("| library | rules | rules + learned fallback |")
    print("|---|---|---|")
    for name, got in rows:
        print(f"| {name} | {score(probes, got, 'rules'):.3f} | {score(probes, got, 'learned'):.3f} |")
    if args.misses:
        for p, g in zip(probes, now, strict=True):
            if g["learned"] != p["category"]:
                print(f"  want {p['category']:13s} got {g['learned']:13s} ({g['rules']}) {p['text'][:110]!r}")


if __name__ == "__main__":
    main()
