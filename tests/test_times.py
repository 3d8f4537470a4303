"""Times are aware UTC inside; a naive datetime is refused (never read as UTC or local time),
and the same aware query answers the same on hosts in different time zones."""

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from harness_memory import InvalidInputError, MemoryStore
from harness_memory.testing import ManualClock

_PROBE = r"""
import json, sys, time
from datetime import UTC, datetime, timedelta, timezone
from harness_memory import InvalidInputError, MemoryStore
s = MemoryStore(sys.argv[1])
out = {"local_offset_h": -time.timezone / 3600}
hour_ago = datetime.now(UTC) - timedelta(hours=1)
out["aware"] = sorted(h.memory.content for h in s.recall("deploy", agent_id="a", since=hour_ago, record=False))
out["aware_other_zone"] = sorted(h.memory.content for h in s.recall(
    "deploy", agent_id="a", since=hour_ago.astimezone(timezone(timedelta(hours=-5))), record=False))
try:
    s.recall("deploy", agent_id="a", since=datetime.now() - timedelta(hours=1), record=False)
    out["naive"] = "accepted"
except InvalidInputError as exc:
    out["naive"] = str(exc)
print(json.dumps(out))
"""


@pytest.fixture()
def aged_store(tmp_path):
    path = tmp_path / "t.db"
    clock = ManualClock((datetime.now(UTC) - timedelta(hours=5)).timestamp())
    with MemoryStore(path, clock=clock) as s:  # the old memory is written five hours ago
        s.remember("deploy old: rollback fixed it", type="success", agent_id="a")
        clock.advance(5 * 3600)
        s.remember("deploy new: restart fixed it", type="success", agent_id="a")
    return path


@pytest.mark.parametrize("tz", ["America/New_York", "Asia/Tokyo"])
def test_aware_since_is_the_same_instant_everywhere_and_naive_is_refused(aged_store, tz):
    env = {**os.environ, "TZ": tz}
    r = subprocess.run(
        [sys.executable, "-c", _PROBE, str(aged_store)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["local_offset_h"] != 0  # the probe really ran off UTC
    assert out["aware"] == out["aware_other_zone"] == ["deploy new: restart fixed it"]
    assert "naive" in out["naive"] and "time zone" in out["naive"]


def test_naive_datetimes_are_refused_by_every_time_argument(tmp_path):
    with MemoryStore(tmp_path / "n.db") as s:
        s.remember("x", type="success", agent_id="a")
        naive = datetime(2026, 1, 1, 12, 0)
        for kwargs in ({"since": naive}, {"until": naive}):
            with pytest.raises(InvalidInputError, match="naive"):
                s.recall("x", agent_id="a", **kwargs)
        aware = naive.replace(tzinfo=UTC)
        hits = s.recall("x", agent_id="a", since=aware - timedelta(days=3650), record=False)
        assert [h.memory.created_at.utcoffset() for h in hits] == [timedelta(0)]  # aware UTC out
