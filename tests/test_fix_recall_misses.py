"""benchmarks/fix_recall_misses.py on the committed scripted sessions: every asked failure gets exactly one
class, and the classes add up to the replay's own figures (hits, false advice) at the defaults."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import fix_recall as fr  # noqa: E402
import fix_recall_misses as fm  # noqa: E402


def test_classes_cover_every_asked_failure_and_agree_with_the_replay(tmp_path):
    fr.TASK = "command"
    src = fr.load_sources(["scripted"], tmp_path, fr.SESSIONS)[0]
    rows = fm.classify(src, tmp_path / "misses.db")
    asked, _ = fr.replay(
        fr.load_sources(["scripted"], tmp_path, fr.SESSIONS)[0],
        "learn_success",
        credit=True,
        online=False,
        db_dir=tmp_path,
    )
    assert len(rows) == len(asked) > 0
    by_case = {a.case.case_id: a for a in asked}
    for r in rows:
        a = by_case[r["case"]]
        assert (r["class"] == "hit") == (a.seen and a.out["on_task_error"].hit3)
        assert r["class"].startswith("false advice") == (not a.seen and a.out["on_task_error"].answered)
        if r["class"].startswith(("link exists", "no link")):
            assert a.seen and not a.out["on_task_error"].hit3
