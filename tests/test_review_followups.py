"""Follow-ups of this session's review of the heldout11 rules (issue 8): a runner's bracketed source name is
never a level tag, and a tool's numbered report with number 0 is not an error."""

from __future__ import annotations

import pytest

from harness_memory import failure_excerpt as fe


@pytest.mark.parametrize("tag", ["ERR", "err", "FAIL", "Failed", "CRIT", "alert", "EMERG", "notice", "ERROR", "WARN"])
def test_a_level_tag_before_a_time_stamp_is_kept_as_evidence_not_stripped_as_a_source(tag):
    line = fe.clean_lines(f"[{tag}] 2026/11/27 02:36:00.082499 compile failed")[0]
    assert line.text.startswith(f"[{tag}]") or line.level is not None


@pytest.mark.parametrize("source", ["Container", "Source", "build-1"])
def test_a_runner_s_source_name_before_a_time_stamp_is_stripped(source):
    assert (
        fe.clean_lines(f"[{source}] 2026/11/27 02:36:00.082499 Running command make")[0].text == "Running command make"
    )


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("curl: (7) Failed to connect to localhost port 80", True),
        ("git: (128) fatal: not a repo", True),
        ("status: (0) ok", False),
        ("sync: (0) files changed", False),
    ],
)
def test_a_numbered_report_is_a_statement_unless_its_number_is_0(text, statement):
    line = fe.clean_lines(text)[0]
    fe._classify(line)
    assert (line.cls >= 2) is statement
