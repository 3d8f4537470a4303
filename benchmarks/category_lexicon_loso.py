"""Would the failure lexicon have raised each blind split's first run? The rules as they stood before each split,
with and without the lexicon beneath them.

    python benchmarks/category_lexicon_loso.py

For each split of tests/fixtures/ci_logs with a commit before its rules (``category_model.SPLIT_COMMITS``), the
library at that commit (``git archive``) categorises the split's logs twice in a subprocess: as it was (what the
split's first run measured, ``category_model.py --loso --old-rules``), and with this checkout's failure lexicon
(harness_memory/failure_lexicon.py and its tables, copied beside it as a separate package) placed beneath its rules
the way signing method 26 places it: the error name a line ends with and an operating system's error code or
message before the words (unless the words say it was a missing dependency), the lexicon's names where the words
find nothing, published exception names where the exception table knows none. (The method's other parts, inside
``_categorize_block`` and the word reader — the wrapper exception's reason, the qualified exception after a prefix,
the settings blanked — are not grafted onto the old code, so this is the lexicon alone.)

The lexicon was written after every split had been read, from published tables and names rather than from any
split's lines; still, its figure here is not blind in the way a split's first run was.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from category_model import CORPUS, SPLIT_COMMITS  # noqa: E402

_DUMP = """
import gzip, json, sys
from pathlib import Path
from harness_memory.failure_excerpt import extract
from harness_memory import error_signatures as es
corpus, rels, graft = Path(sys.argv[1]), json.loads(sys.stdin.read()), sys.argv[2] == "1"
if graft:
    import lexpkg.failure_lexicon as L
    old_text = es._by_text

    def by_text(text):
        head = text[:8000]
        reason = L.trailing_reason(head) or L.os_reason(head)
        words = old_text(text)
        if reason is not None and not (reason == "not_found" and words == "import_error"):
            return reason
        return words or L.text_category(head)

    class Published:  # an entry at the end of the exception table: a published name of this category
        def __init__(self, cat):
            self.cat = cat

        def search(self, name):
            return L.published_category(name) == self.cat

    es._by_text = by_text
    cats = ("import_error", "type_error", "compile_error", "assertion", "timeout", "out_of_memory", "permission",
            "not_found", "network", "rate_limit")
    es._BY_EXCEPTION.extend((c, Published(c)) for c in cats)
out = {}
for rel in rels:
    data = (corpus / rel).read_bytes()
    data = gzip.decompress(data) if rel.endswith(".gz") else data
    out[rel] = es.categorize(extract(data.decode("utf-8", errors="replace")))
print(json.dumps(out))
"""


def run(commit: str, rels: list[str], graft: bool) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as d:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "harness_memory"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", d], input=archive, check=True)
        lexpkg = Path(d) / "lexpkg"
        lexpkg.mkdir()
        (lexpkg / "__init__.py").write_text("", encoding="utf-8")
        for name in ("failure_lexicon.py", "failure_lexicon_tables.py", "regex_prefilter.py"):
            shutil.copy(ROOT / "harness_memory" / name, lexpkg / name)
        got = subprocess.run(
            [sys.executable, "-c", _DUMP, str(CORPUS), "1" if graft else "0"],
            input=json.dumps(rels),
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONPATH": d, "PATH": "/usr/bin:/bin"},
            cwd=d,
        )
    return json.loads(got.stdout)


def main() -> None:
    labels = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
    print("| split | logs | rules before the split | the same + failure lexicon | changed right / wrong |")
    print("|---|---|---|---|---|")
    tot = {"n": 0, "was": 0, "now": 0}
    for split, commit in SPLIT_COMMITS.items():
        rels = [r for r in labels if labels[r]["split"] == split]
        was, now = run(commit, rels, False), run(commit, rels, True)
        truth = {r: labels[r]["category"] for r in rels}
        a = sum(was[r] == truth[r] for r in rels)
        b = sum(now[r] == truth[r] for r in rels)
        fixed = sum(was[r] != truth[r] and now[r] == truth[r] for r in rels)
        broke = sum(was[r] == truth[r] and now[r] != truth[r] for r in rels)
        tot["n"] += len(rels)
        tot["was"] += a
        tot["now"] += b
        print(
            f"| {split} | {len(rels)} | {a / len(rels):.3f} | {b / len(rels):.3f} | +{fixed} / -{broke} |", flush=True
        )
    n = tot["n"]
    print(f"| all | {n} | {tot['was'] / n:.3f} | {tot['now'] / n:.3f} | |")


if __name__ == "__main__":
    main()
