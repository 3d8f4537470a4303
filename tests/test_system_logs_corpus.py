"""The own system-log corpus (tests/fixtures/system_logs, issue 8): Loghub's structured-CSV format, labels present
and consistent with their source locations, files small."""

from __future__ import annotations

import csv
import gzip
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent / "fixtures" / "system_logs"
SYSTEMS = {"PostgreSQL": 2000, "Chromium": 2000, "PyWeb": 2000, "PyJobs": 2000}


def _open(path: Path) -> io.TextIOBase:
    if path.exists():
        return path.open(encoding="utf-8", newline="")
    return gzip.open(f"{path}.gz", "rt", encoding="utf-8", newline="")


def _rows(system: str) -> list[dict[str, str]]:
    with _open(ROOT / system / f"{system}_2k.log_structured.csv") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_structured_csv_format(system):
    rows = _rows(system)
    assert len(rows) == SYSTEMS[system] <= 2000
    assert list(rows[0]) == ["LineId", "Content", "EventId", "EventTemplate", "Location", "PassThrough"]
    assert [int(r["LineId"]) for r in rows] == list(range(1, len(rows) + 1))
    for r in rows:
        assert re.fullmatch(r"E[0-9a-f]{10}", r["EventId"]), r
        assert r["Content"].strip() and r["EventTemplate"] and r["Location"], r
        assert "\n" not in r["Content"]  # the first line of a message only
        assert r["PassThrough"] in ({"yes", "no"} if system.startswith("Py") else {"unknown"})
    # one EventId per location and back: the label is the source location
    pairs = {(r["EventId"], r["Location"].rsplit(", ", 1)[-1]) for r in rows}
    assert len({e for e, _ in pairs}) == len({loc for _, loc in pairs}) == len(pairs)
    assert len(pairs) >= 20


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_raw_log_matches_rows(system):
    rows = _rows(system)
    with _open(ROOT / system / f"{system}_2k.log") as f:
        raw = f.read().splitlines()
    per_row = 2 if system == "PostgreSQL" else 1  # PostgreSQL: the message line and its LOCATION line
    assert len(raw) == per_row * len(rows)
    for r, line in zip(rows, raw[::per_row]):
        assert line.endswith(r["Content"]), (line, r["Content"])
    if system == "PostgreSQL":
        assert all("LOCATION:  " in line for line in raw[1::2])


def test_files_are_small_and_hold_no_machine_paths():
    files = [p for p in ROOT.glob("*/*_2k.*")]
    assert len(files) == 2 * len(SYSTEMS)
    for p in files:
        assert p.stat().st_size <= 400_000, p
        text = (gzip.open(p, "rt", encoding="utf-8") if p.suffix == ".gz" else p.open(encoding="utf-8")).read()
        assert "/work/" not in text and "/root/" not in text, p
