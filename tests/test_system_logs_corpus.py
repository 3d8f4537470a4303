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
SYSTEMS = {"PostgreSQL": 2000, "Chromium": 2000, "PyWeb": 2000, "PyJobs": 2000, "Pip": 1828}


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
        assert r["PassThrough"] in ({"yes", "no"} if system.startswith("P") and system != "PostgreSQL" else {"unknown"})
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


# -- benchmarks/signatures.py --systems: the same GA code on a folder of systems -----------------------------------
BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _write_system(root: Path, name: str, rows: list[tuple[str, str, str]], gz: bool = False) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    path = folder / f"{name}_2k.log_structured.csv"
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["LineId", "Content", "EventId", "EventTemplate", "PassThrough"])
    for i, (content, event, pt) in enumerate(rows, 1):
        w.writerow([i, content, event, "-", pt])
    if gz:
        with gzip.open(f"{path}.gz", "wt", encoding="utf-8", newline="") as f:
            f.write(buf.getvalue())
    else:
        path.write_text(buf.getvalue(), encoding="utf-8")


def test_systems_option_scores_a_folder_of_systems(tmp_path):
    import sys

    sys.path.insert(0, str(BENCH))
    import signatures as bench

    # hand-made: the naive baseline merges what differs in digits only and splits a word that varies
    plain = [
        ("connection 17 closed after 3 ms", "E1", "no"),
        ("connection 4 closed after 12 ms", "E1", "no"),
        ("user alice logged in", "E2", "no"),
        ("user bob logged in", "E2", "no"),
        ("worker exiting", "E3", "yes"),
        ("joining pool", "E3", "yes"),
    ]
    _write_system(tmp_path / "systems", "Plain", plain)
    _write_system(tmp_path / "systems", "Zipped", plain[:4], gz=True)
    (tmp_path / "systems" / "not_a_system").mkdir()
    assert bench.naive_template("took 12 ms at 0x1f") == "took 0 ms at 0x0f"
    rows = bench.systems_table(tmp_path / "systems", tmp_path, limit=None)
    by = {r[0]: r for r in rows}
    assert list(by) == ["Plain", "Zipped", "mean"]
    header = bench.SYSTEMS_HEADER
    plain_row = dict(zip(header, by["Plain"]))
    assert plain_row["lines"] == 6 and plain_row["pass-through lines"] == 2 and plain_row["true groups"] == 3
    # naive: E1 grouped (2 rows), E2 split, E3 split -> 2/6; without pass-through rows: 2/4
    assert plain_row["naive GA"] == pytest.approx(2 / 6)
    assert plain_row["naive GA without pass-through"] == pytest.approx(2 / 4)
    assert 0.0 <= plain_row["GA"] <= 1.0 and 0.0 <= plain_row["GA without pass-through"] <= 1.0
    zipped = dict(zip(header, by["Zipped"]))
    assert zipped["lines"] == 4 and zipped["GA"] == zipped["GA without pass-through"]
    mean = dict(zip(header, by["mean"]))
    assert mean["GA"] == pytest.approx((plain_row["GA"] + zipped["GA"]) / 2)
    (tmp_path / "again").mkdir()
    limited = bench.systems_table(tmp_path / "systems", tmp_path / "again", limit=2)
    assert [r[1] for r in limited[:2]] == [2, 2] and len(limited[0]) == len(header)


def test_systems_option_on_the_command_line(tmp_path):
    import subprocess
    import sys

    _write_system(tmp_path, "Tiny", [("disk 1 full", "E1", "no"), ("disk 2 full", "E1", "no")])
    out = subprocess.run(
        [sys.executable, str(BENCH / "signatures.py"), "--systems", str(tmp_path), "--limit", "2"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    assert "naive GA" in out and re.search(r"\|\s+Tiny \| +2 \|", out) and re.search(r"\|\s+mean \|", out)


def test_systems_option_on_a_slice_of_the_corpus(tmp_path):
    import sys

    sys.path.insert(0, str(BENCH))
    import signatures as bench

    rows = bench.systems_table(ROOT, tmp_path, limit=40)
    assert [r[0] for r in rows] == [*sorted(SYSTEMS), "mean"]
    for r in rows[:-1]:
        row = dict(zip(bench.SYSTEMS_HEADER, r))
        assert row["lines"] == 40 and 1 <= row["true groups"] <= 40 and 1 <= row["signatures"] <= 40
        assert 0.0 <= row["GA"] <= 1.0 and 0.0 <= row["GA without pass-through"] <= 1.0
        assert 0.0 <= row["naive GA"] <= 1.0
