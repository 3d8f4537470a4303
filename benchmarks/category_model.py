"""Train, write and measure the learned category fallback (harness_memory/category_model.py).

    python benchmarks/category_model.py --write                    # rebuild harness_memory/category_model.json.gz
    python benchmarks/category_model.py --write --exclude heldout10 # ... leaving a split out of the training
    python benchmarks/category_model.py --loso                     # leave-one-split-out figures
    python benchmarks/category_model.py --loso --old-rules         # ... also against the rules as they stood
                                                                   #     before each split (from git history)

Training data: every log of tests/fixtures/ci_logs (labels.json), twice: the decisive block the library cuts
out of it (``extract``: the text the model reads at run time) and the hand-marked lines, each with the log's
hand-given category. Features and weights: ``category_model.features`` (words, word pairs, character 3-5-grams),
sublinear TF-IDF, L2-normalised; a multinomial logistic regression (scikit-learn, ``C`` below). Written as plain
JSON (vocabulary, IDF, coefficients), never a pickle.

Leave-one-split-out: for each split S, train on the other splits and score S's logs: the model alone, the rules
alone, and the rules with the model where they answer ``unknown`` (the shipped combination). The rules were
written after reading every split's misses, so the rules' figure on S is in-sample; ``--old-rules`` also
reconstructs the rules as they stood when S was added (the library at the commit that added S's labels,
``git archive`` into a temporary folder, run in a subprocess), which is what the first run of S measured.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness_memory import category_model  # noqa: E402
from harness_memory.category_model import MODEL_PATH, CategoryModel, block_text, features  # noqa: E402
from harness_memory.error_signatures import categorize  # noqa: E402
from harness_memory.failure_excerpt import clean_lines, extract  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "ci_logs"
C = 30.0  # inverse regularisation, chosen by leave-one-split-out over 3, 10, 30 (docs/signatures.md)
MIN_DF = 2  # a feature must occur in two training texts
# the commit that added each split's labels: the library there is the rules before that split's rules
SPLIT_COMMITS = {
    "heldout2": "fa5e054",
    "heldout3": "61a6b0c",
    "heldout4": "80d86f9",
    "heldout5": "273bd09",
    "heldout6": "05753cb",
    "heldout7": "d454f60",
    "heldout8": "9e0b5cc",
    "heldout9": "bc044ab",
    "heldout10": "ab65451",
    "heldout11": "58901f5",
    "heldout12": "f5d15b4",
    "heldout13": "bc226dc",
    "heldout14": "5940c44",
    "heldout15": "cf5e6aa",
    "heldout16": "89c2cb1",
    "heldout17": "7175d11",
    "heldout18": "4ba1eac",
    "heldout19": "a9ba2b8",
    "heldout20": "cc1bea6",
}
_DUMP = """
import gzip, json, sys
from pathlib import Path
from harness_memory.failure_excerpt import extract
from harness_memory.error_signatures import categorize
corpus, rels = Path(sys.argv[1]), json.loads(sys.stdin.read())
out = {}
for rel in rels:
    data = (corpus / rel).read_bytes()
    data = gzip.decompress(data) if rel.endswith(".gz") else data
    ex = extract(data.decode("utf-8", errors="replace"))
    out[rel] = {"rules": categorize(ex), "message": ex.message, "block": ex.block, "detail": ex.detail,
                "exception": ex.exception}
print(json.dumps(out))
"""


def read_log(rel: str) -> str:
    data = (CORPUS / rel).read_bytes()
    if rel.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


GENERIC_PER_END = 5  # generic lines taken from each end of a log (first and last, deduplicated)
GENERIC_MARGIN = 3  # lines this close to a marked span are its detail, not generic


def generic_lines(cleaned: list, spans: list) -> list[str]:
    """A log's lines that carry a failure word but are not its failure: away from the hand-marked spans (the
    trailers, summaries, exit codes and echoed commands around it: `Error: Process completed with exit code 1`,
    `BUILD FAILED`, `make: *** [all] Error 2`). Read alone, such a line names no category: the model learns them
    as ``unknown``, so it does not guess a category from failure words alone."""
    near: set[int] = set()
    for s, e in spans:
        near.update(range(s - GENERIC_MARGIN, e + GENERIC_MARGIN + 1))
    found = [
        ln.text.strip()
        for i, ln in enumerate(cleaned, 1)
        if i not in near and len(ln.text.strip()) > 3 and category_model.FAILURE_WORDS.search(ln.text)
    ]
    found = list(dict.fromkeys(found))
    if len(found) > 2 * GENERIC_PER_END:
        found = found[:GENERIC_PER_END] + found[-GENERIC_PER_END:]
    return list(dict.fromkeys(found))


def corpus_texts(labels: dict) -> dict[str, dict]:
    """Per log: the library's block (``text``), the rules' category, the marked lines' text (``marked``) and its
    generic failure-word lines (``generic``)."""
    out = {}
    for rel, lab in labels.items():
        text = read_log(rel)
        ex = extract(text)
        cleaned = clean_lines(text)
        marked = "\n".join(cleaned[i - 1].text for s, e in lab["lines"] for i in range(s, e + 1) if i <= len(cleaned))
        out[rel] = {
            "text": block_text(ex.message, ex.block, ex.detail, ex.exception),
            "rules": categorize(ex),
            "marked": marked[:4000],
            "generic": generic_lines(cleaned, lab["lines"]),
        }
    return out


def train(docs: list[str], ys: list[str], c: float = C, min_df: int = MIN_DF) -> CategoryModel:
    import numpy as np
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression

    feats = [features(d) for d in docs]
    df = collections.Counter(f for fs in feats for f in fs)
    vocab = {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= min_df))}
    n = len(docs)
    idf = [0.0] * len(vocab)
    for f, i in vocab.items():
        idf[i] = math.log((1 + n) / (1 + df[f])) + 1.0
    rows, cols, vals = [], [], []
    for k, fs in enumerate(feats):
        vec = {vocab[f]: (1.0 + math.log(x)) * idf[vocab[f]] for f, x in fs.items() if f in vocab}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        for col, v in vec.items():
            rows.append(k)
            cols.append(col)
            vals.append(v / norm)
    x = sparse.csr_matrix((vals, (rows, cols)), shape=(n, len(vocab)), dtype=np.float64)
    clf = LogisticRegression(C=c, max_iter=5000).fit(x, ys)
    return CategoryModel(
        classes=tuple(str(k) for k in clf.classes_),
        vocabulary=vocab,
        idf=idf,
        coef=clf.coef_.tolist(),
        intercept=clf.intercept_.tolist(),
    )


UNKNOWN_CLASS = True  # --no-unknown: train without the generic lines (the model before 2026-11-26 22:30)


def training_set(texts: dict, labels: dict, rels: list[str]) -> tuple[list[str], list[str]]:
    docs, ys = [], []
    for rel in rels:
        for doc in (texts[rel]["text"], texts[rel]["marked"]):
            docs.append(doc)
            ys.append(labels[rel]["category"])
        if UNKNOWN_CLASS:
            for doc in texts[rel]["generic"]:
                docs.append(doc)
                ys.append("unknown")
    return docs, ys


def old_rules(split: str, rels: list[str]) -> dict[str, dict]:
    """The library at the commit that added ``split``'s labels, run on ``rels`` in a subprocess."""
    with tempfile.TemporaryDirectory() as d:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", SPLIT_COMMITS[split], "harness_memory"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", d], input=archive, check=True)
        got = subprocess.run(
            [sys.executable, "-c", _DUMP, str(CORPUS)],
            input=json.dumps(rels),
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONPATH": d, "PATH": "/usr/bin:/bin"},
            cwd=d,  # ``-c`` puts the working directory first on sys.path: it must not be this checkout
        )
    return json.loads(got.stdout)


def fallback(rules: str, model: CategoryModel, text: str) -> str:
    """What signing does (``categorize_learned``): the rules' category, else the model's through
    ``category_model.predict`` (a failure word, ``MIN_PROBABILITY``)."""
    return rules if rules != "unknown" else category_model.predict(text, model)


def loso(labels: dict, texts: dict, with_old: bool) -> None:
    splits = sorted({v["split"] for v in labels.values()}, key=lambda s: (len(s), s))  # dev, heldout, heldout2, ...
    print(
        "| split | logs | model alone | rules now (in-sample) | rules now + model | rules before the split | "
        "rules before + model | model alone on the old block |"
    )
    print("|---|---|---|---|---|---|---|---|")
    totals: collections.Counter = collections.Counter()
    for split in splits:
        test = [r for r in labels if labels[r]["split"] == split]
        model = train(*training_set(texts, labels, [r for r in labels if labels[r]["split"] != split]))
        truth = {r: labels[r]["category"] for r in test}
        alone = sum(model.predict(texts[r]["text"])[0] == truth[r] for r in test)
        now = sum(texts[r]["rules"] == truth[r] for r in test)
        now_fb = sum(fallback(texts[r]["rules"], model, texts[r]["text"]) == truth[r] for r in test)
        cells = [split, len(test), alone / len(test), now / len(test), now_fb / len(test)]
        totals.update(n=len(test), alone=alone, now=now, now_fb=now_fb)
        if with_old and split in SPLIT_COMMITS:
            old = old_rules(split, test)
            old_text = {r: block_text(o["message"], o["block"], o["detail"], o["exception"]) for r, o in old.items()}
            was = sum(old[r]["rules"] == truth[r] for r in test)
            was_fb = sum(fallback(old[r]["rules"], model, old_text[r]) == truth[r] for r in test)
            was_alone = sum(model.predict(old_text[r])[0] == truth[r] for r in test)
            cells += [was / len(test), was_fb / len(test), was_alone / len(test)]
            totals.update(old_n=len(test), was=was, was_fb=was_fb, was_alone=was_alone)
        else:
            cells += ["-", "-", "-"]
        print("| " + " | ".join(f"{c:.3f}" if isinstance(c, float) else str(c) for c in cells) + " |", flush=True)
    n, m = totals["n"], totals["old_n"] or 1
    print(
        f"| all | {n} | {totals['alone'] / n:.3f} | {totals['now'] / n:.3f} | {totals['now_fb'] / n:.3f} | "
        + (
            f"{totals['was'] / m:.3f} | {totals['was_fb'] / m:.3f} | {totals['was_alone'] / m:.3f} |"
            if totals["old_n"]
            else "- | - | - |"
        )
    )
    if totals["old_n"]:
        print(
            f"(the last three columns over the {totals['old_n']} logs of the splits with a commit before their rules)"
        )
    # in-sample: trained on every split, scored on every split
    model = train(*training_set(texts, labels, list(labels)))
    ins = sum(model.predict(texts[r]["text"])[0] == labels[r]["category"] for r in labels) / len(labels)
    print(f"\nin-sample (trained and scored on all {len(labels)} logs): model alone {ins:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help=f"train on the corpus and write {MODEL_PATH.name}")
    ap.add_argument("--exclude", nargs="*", default=[], help="splits left out of the training (and of --loso)")
    ap.add_argument("--loso", action="store_true", help="leave-one-split-out figures")
    ap.add_argument("--old-rules", action="store_true", help="with --loso: also the rules before each split (git)")
    ap.add_argument("--out", default=str(MODEL_PATH), help="where --write writes the model")
    ap.add_argument(
        "--no-unknown", action="store_true", help="train without the generic lines' unknown class (the older model)"
    )
    ap.add_argument("--probes", action="store_true", help="what the trained model names on generic failure lines")
    args = ap.parse_args()
    global UNKNOWN_CLASS
    UNKNOWN_CLASS = not args.no_unknown
    labels = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
    labels = {k: v for k, v in labels.items() if v["split"] not in set(args.exclude)}
    texts = corpus_texts(labels)
    if args.write:
        model = train(*training_set(texts, labels, list(labels)))
        doc = (json.dumps(model.to_json(), separators=(",", ":")) + "\n").encode("utf-8")
        out = Path(args.out)
        # gzip (mtime 0: the same weights give the same bytes) where the name asks for it, as the shipped file does
        out.write_bytes(gzip.compress(doc, 9, mtime=0) if out.suffix == ".gz" else doc)
        print(
            f"wrote {args.out}: {len(model.vocabulary)} features x {len(model.classes)} categories, {len(labels)} logs"
        )
    if args.loso:
        loso(labels, texts, args.old_rules)
    if args.probes:
        probes(train(*training_set(texts, labels, list(labels))))


# failure lines that name no category (trailers, summaries, exit codes, generic messages), written here, not taken
# from the corpus: what a fallback should leave unknown
PROBES = [
    "Error: Thing blew up badly in module foo",
    "ERROR: something went wrong",
    "fatal: the widget failed",
    "Error: exit status 1",
    "FAILED",
    "error: build step failed",
    "Error in stage deploy",
    "Job failed: exit code 2",
    "Process finished with error",
    "Unexpected error occurred while processing request",
    "Error: Request failed",
    "Error: cannot proceed",
    "failure in foo_bar module",
    "Exception in thread main",
    "RuntimeError: the frobnicator is broken",
    "java.lang.IllegalStateException: widget closed",
    "Error: Process completed with exit code 1.",
    "make: *** [Makefile:12: all] Error 2",
    "BUILD FAILED in 3s",
    "##[error]Process completed with exit code 1.",
    "npm ERR! code ELIFECYCLE",
    "Tests failed",
    "ERROR: Job failed: exit code 1",
    "Build step failed, see log",
]


def probes(model: CategoryModel) -> None:
    got = [(t, category_model.predict(t, model)) for t in PROBES]
    named = [(t, c) for t, c in got if c != "unknown"]
    print(f"\ngeneric failure lines named with a category: {len(named)} of {len(PROBES)}")
    for t, c in named:
        print(f"  {c:14s} {t}")


if __name__ == "__main__":
    main()
