"""Documents: add throughput and recall latency with document chunks mixed into the memories.

    python benchmarks/documents.py --data ../shared/data

Adds this repository's docs/ and README.md, its Python sources and the design documents in
../shared/seeds as documents to a store that already holds the LoCoMo dev turns as memories, then
times recall of the LoCoMo questions with and without the chunks (``types`` including
``document`` or not), and a re-add of the unchanged folder (skipped) and of one edited file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_dir, pct, table
from harness_memory import MemoryStore, Settings
from locomo_recall import load

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    args = ap.parse_args()
    data = data_dir(args.data)
    seeds = data.parent / "seeds"
    files = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"] + sorted((ROOT / "harness_memory").glob("*.py"))
    files += sorted(seeds.glob("*.txt")) if seeds.exists() else []
    total_bytes = sum(f.stat().st_size for f in files)
    with tempfile.TemporaryDirectory() as d, MemoryStore(Path(d) / "docs.db", settings=Settings()) as s:
        questions = []
        n_mem = 0
        for _sample, turns, qs in load(data / "locomo" / "locomo-dev.json"):
            s.remember_many([{"content": t, "type": "pattern", "agent_id": "reader"} for _, t in turns])
            n_mem += len(turns)
            questions += [q for q, _ in qs]
        questions = questions[:300]

        def lat(types):
            out = []
            for q in questions:
                t0 = time.perf_counter()
                s.recall(q, agent_id="reader", types=types, limit=10, record=False)
                out.append((time.perf_counter() - t0) * 1000)
            return out

        lat(None)  # warm-up: the vector index, the page cache
        before = lat(None)
        t0 = time.perf_counter()
        chunks = 0
        for f in files:
            chunks += s.add_document(f).document.chunks
        add_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        skipped = sum(s.add_document(f).skipped for f in files)
        readd_s = time.perf_counter() - t0
        edited = (ROOT / "docs" / "architecture.md").read_text() + "\n\nOne more paragraph about the benchmark.\n"
        t0 = time.perf_counter()
        rep = s.add_document(edited, source=str((ROOT / "docs" / "architecture.md").resolve()))
        edit_ms = (time.perf_counter() - t0) * 1000
        mixed = lat(None)
        only_docs = lat(["document"])
        no_docs = lat(["pattern"])
        hits = s.recall("how does the tool-call log bound results", types=["document"], limit=3, record=False)
    print(
        table(
            f"Documents: {len(files)} files, {total_bytes / 1024:.0f} KiB -> {chunks} chunks, beside {n_mem} "
            "memories (hashing embedder, 2-core machine)",
            ["measure", "value"],
            [
                ["add (first time), s", add_s],
                ["add throughput, chunks/s", chunks / add_s],
                ["add throughput, KiB/s", total_bytes / 1024 / add_s],
                [f"re-add unchanged ({skipped} skipped), s", readd_s],
                [f"re-add one edited file ({rep.added} added, {rep.unchanged} kept), ms", edit_ms],
            ],
        )
    )
    rows = [
        [name, pct(x, 50), pct(x, 95)]
        for name, x in (
            ("memories only, before documents", before),
            ("all types, documents mixed in", mixed),
            ("types=[pattern] (documents present)", no_docs),
            ("types=[document]", only_docs),
        )
    ]
    print(
        table(
            f"recall latency of {len(questions)} LoCoMo questions, ms (question embedding included)",
            ["recall", "p50", "p95"],
            rows,
        )
    )
    print(
        "top chunk for 'how does the tool-call log bound results':",
        hits[0].memory.metadata.get("title") if hits else None,
        "/",
        hits[0].memory.metadata.get("heading") if hits else None,
    )


if __name__ == "__main__":
    main()
