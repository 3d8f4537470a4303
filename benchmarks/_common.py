"""Shared helpers for the benchmark scripts (tables, percentiles, data location)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_dir(arg: str | None) -> Path:
    d = Path(arg) if arg else DEFAULT_DATA
    if not d.exists():
        sys.exit(f"benchmark data not found at {d}: pass --data DIR (see ../shared/data/README.md for the sources)")
    return d


def pct(xs, p) -> float:
    return float(np.percentile(np.asarray(xs), p))


def table(title: str, header: list[str], rows: list[list]) -> str:
    cells = [[str(c) for c in header]] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [title, line, "| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths)) + " |", line]
    out += ["| " + " | ".join(c.rjust(w) for c, w in zip(r, widths)) + " |" for r in cells[1:]]
    out.append(line)
    return "\n".join(out)
