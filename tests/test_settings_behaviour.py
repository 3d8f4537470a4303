"""Settings as a user sets them (harness_memory/settings.py, docs/configuration.md): every documented
default is the default, every bound holds at its edge and refuses one step past it, and the
environment (``HARNESS_MEMORY_*``, comma lists, ``__`` for nested fields) reads as documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness_memory import Settings
from harness_memory.errors import ConfigurationError
from harness_memory.settings import (
    ConfidenceWeights,
    MaintenanceSettings,
    RankingWeights,
    default_db_path,
    from_environment,
)

DOCS = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    import os

    for k in list(os.environ):
        if k.startswith("HARNESS_MEMORY_"):
            monkeypatch.delenv(k)


def _documented_defaults() -> dict[str, str]:
    """``setting -> default`` of the settings table, one entry per name of a row."""
    out = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`") or "*" in cells[0] or cells[0] == "`db`":
            continue
        names = re.findall(r"`([a-z_.]+)`", cells[0])
        if not names:  # the command line's environment variables: not settings
            continue
        values = re.findall(r"`([^`]*)`", cells[1]) or [cells[1]]
        if len(values) == 1 and len(names) > 1:  # "unset" for both
            values = values * len(names)
        out.update(zip(names, values, strict=True))
    return out


def _parse(text: str):
    if text in ("unset", "–"):
        return None
    if text in ("true", "false"):
        return text == "true"
    if text == "{}":
        return {}
    if text == "[]":
        return []
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return float(text)
    return text


def test_every_documented_default_is_the_default():
    s = Settings()
    documented = _documented_defaults()
    assert len(documented) >= 30
    for name, text in documented.items():
        got = s
        for part in name.split("."):
            got = getattr(got, part)
        want = _parse(text)
        if name == "techniques":
            want = text.split(",")
        if isinstance(want, float):
            assert got == pytest.approx(want), name
        else:
            assert got == want, name


def test_the_maintenance_and_ranking_defaults_are_the_documented_ones():
    m = MaintenanceSettings()
    assert (m.decay_rate_per_day, m.decay_floor, m.decay_exempt_types) == (0.01, 0.1, ["decision"])
    assert m.decay_rates == {} and MaintenanceSettings(decay_rates={"failure": 0.05}).decay_rates == {"failure": 0.05}
    assert (m.archive_after_days, m.archive_below, m.archived_relevance) == (90, 0.2, 0.05)
    assert (m.access_log_retention_days, m.tool_call_retention_days, m.reflect_idle_minutes) == (90, 30, 30)
    assert (m.consolidate_min_members, m.consolidate_similarity, m.consolidate_growth_trigger) == (3, 0.75, 1000)
    assert (m.compact_sparse_ratio, m.vector_changes_keep, m.job_batch_seconds) == (0.25, 100_000, 0.05)
    assert (m.lease_seconds, m.lease_heartbeat_seconds, m.misfire_grace_seconds) == (60, None, 6 * 3600)
    assert m.schedules == {
        "decay": "cron:0 3 * * *",
        "expire": "interval:3600",
        "consolidate": "cron:0 4 * * 0",
        "compact": "cron:0 5 * * 0",
        "backfill": "interval:900",
        "consolidate_growth": "interval:600",
        "resign": "interval:3600",
    }
    r = RankingWeights()
    assert (r.vector, r.keyword, r.tags, r.signature) == (0.25, 0.75, 0.3, 0.5)
    assert (r.prior_weight, r.usefulness, r.recency, r.importance) == (0.3, 0.5, 0.25, 0.25)
    assert (r.recency_half_life_days, r.usefulness_prior_successes, r.usefulness_prior_failures) == (30.0, 1.0, 1.0)
    c = ConfidenceWeights()
    assert (c.intercept, c.unseen, c.best_keyword, c.best_vector, c.vector) == (-2.99, -8.44, 5.48, 9.74, 2.67)
    assert (c.signature, c.tags, c.inject_min) == (0.9, 0.9, 0.44)


# (model, field, the edge that is accepted, one step past it that is refused)
BOUNDS = [
    (Settings, "near_duplicate_threshold", 1.0, 1.0001),
    (Settings, "near_duplicate_threshold", 1e-9, 0.0),
    (Settings, "max_content_bytes", 1, 0),
    (Settings, "max_tags", 1, 0),
    (Settings, "max_tag_length", 1, 0),
    (Settings, "max_limit", 1, 0),
    (Settings, "keyword_posting_budget", 1, 0),
    (Settings, "max_retries", 1, 0),
    (Settings, "success_floor", 0.0, -0.01),
    (Settings, "success_floor", 1.0, 1.01),
    (Settings, "prior_strength", 1e-9, 0.0),
    (Settings, "ucb_c", 0.0, -0.01),
    (Settings, "prompt_budget_chars", 1, 0),
    (Settings, "tool_result_max_bytes", 200, 199),
    (Settings, "tool_result_max_bytes", 1 << 20, (1 << 20) + 1),
    (Settings, "tool_parameters_max_bytes", 200, 199),
    (Settings, "tool_parameters_max_bytes", 1 << 20, (1 << 20) + 1),
    (Settings, "document_chunk_chars", 200, 199),
    (Settings, "document_chunk_chars", 32_768, 32_769),
    (Settings, "watch_debounce_seconds", 0.0, -0.01),
    (Settings, "watch_debounce_seconds", 3600, 3600.01),
    (Settings, "fix_similar_min", 1.0, 1.01),
    (Settings, "fix_similar_min", 1e-9, 0.0),
    (Settings, "fix_similar_breadth", 1, 0),
    (Settings, "fix_similar_breadth", 1000, 1001),
    (Settings, "fix_general_min", 1, 0),
    (Settings, "fix_general_min", 1000, 1001),
    (Settings, "fix_task_min", 1, 0),
    (Settings, "fix_task_min", 1000, 1001),
    (Settings, "fix_task_share", 0.0, -0.01),
    (Settings, "fix_task_share", 1.0, 1.01),
    (Settings, "api_max_body_bytes", 1, 0),
    (Settings, "busy_timeout_ms", 0, -1),
    (Settings, "connect_timeout", 3600, 3600.01),
    (Settings, "connect_timeout", 1e-9, 0.0),
    (Settings, "pool_size", 1, 0),
    (Settings, "pool_size", 1000, 1001),
    (Settings, "recall_boost", 0.0, -0.01),
    (Settings, "recall_boost", 1.0, 1.01),
    (Settings, "namespace", "n", ""),
    (Settings, "namespace", "n" * 200, "n" * 201),
    (Settings, "mcp_agent_id", "m" * 200, "m" * 201),
    (Settings, "embed_failure", "raise", "ignore"),
    (Settings, "vector_search", "vec0", "faiss"),
    (Settings, "exploration", "thompson", "greedy"),
    (RankingWeights, "vector", 0.0, -0.01),
    (RankingWeights, "keyword", 0.0, -0.01),
    (RankingWeights, "tags", 0.0, -0.01),
    (RankingWeights, "signature", 0.0, -0.01),
    (RankingWeights, "prior_weight", 1.0, 1.01),
    (RankingWeights, "prior_weight", 0.0, -0.01),
    (RankingWeights, "usefulness", 0.0, -0.01),
    (RankingWeights, "recency", 0.0, -0.01),
    (RankingWeights, "importance", 0.0, -0.01),
    (RankingWeights, "recency_half_life_days", 1e-9, 0.0),
    (RankingWeights, "usefulness_prior_successes", 1e-9, 0.0),
    (RankingWeights, "usefulness_prior_failures", 1e-9, 0.0),
    (ConfidenceWeights, "signature", 1.0, 1.01),
    (ConfidenceWeights, "signature", 0.0, -0.01),
    (ConfidenceWeights, "tags", 1.0, 1.01),
    (ConfidenceWeights, "tags", 0.0, -0.01),
    (ConfidenceWeights, "inject_min", 1.0, 1.01),
    (ConfidenceWeights, "inject_min", 0.0, -0.01),
    (MaintenanceSettings, "decay_rate_per_day", 0.0, -0.01),
    (MaintenanceSettings, "decay_rate_per_day", 0.999, 1.0),
    (MaintenanceSettings, "decay_floor", 1.0, 1.01),
    (MaintenanceSettings, "decay_floor", 0.0, -0.01),
    (MaintenanceSettings, "archive_after_days", 1e-9, 0.0),
    (MaintenanceSettings, "archive_below", 1.0, 1.01),
    (MaintenanceSettings, "archive_below", 0.0, -0.01),
    (MaintenanceSettings, "archived_relevance", 1.0, 1.01),
    (MaintenanceSettings, "archived_relevance", 0.0, -0.01),
    (MaintenanceSettings, "access_log_retention_days", 1e-9, 0.0),
    (MaintenanceSettings, "tool_call_retention_days", 1e-9, 0.0),
    (MaintenanceSettings, "reflect_idle_minutes", 1e-9, 0.0),
    (MaintenanceSettings, "consolidate_min_members", 2, 1),
    (MaintenanceSettings, "consolidate_similarity", 1.0, 1.01),
    (MaintenanceSettings, "consolidate_similarity", 1e-9, 0.0),
    (MaintenanceSettings, "consolidate_growth_trigger", 1, 0),
    (MaintenanceSettings, "compact_sparse_ratio", 1e-9, 0.0),
    (MaintenanceSettings, "compact_sparse_ratio", 0.999, 1.0),
    (MaintenanceSettings, "vector_changes_keep", 1000, 999),
    (MaintenanceSettings, "job_batch_seconds", 10, 10.01),
    (MaintenanceSettings, "job_batch_seconds", 1e-9, 0.0),
    (MaintenanceSettings, "lease_seconds", 1e-9, 0.0),
    (MaintenanceSettings, "lease_heartbeat_seconds", 1e-9, 0.0),
    (MaintenanceSettings, "misfire_grace_seconds", 1, 0),
]


@pytest.mark.parametrize(("model", "field", "edge", "past"), BOUNDS, ids=lambda x: str(x)[:24])
def test_every_bound_holds_at_its_edge_and_refuses_one_step_past_it(model, field, edge, past):
    assert getattr(model(**{field: edge}), field) == edge
    with pytest.raises(ValidationError, match=field):
        model(**{field: past})


def test_lists_come_comma_separated_from_the_environment_and_nested_fields_with_two_underscores(monkeypatch):
    monkeypatch.setenv("HARNESS_MEMORY_EXTRA_TYPES", " discovery , plan,,")
    monkeypatch.setenv("HARNESS_MEMORY_TECHNIQUES", "fresh_start,escalate")
    monkeypatch.setenv("HARNESS_MEMORY_RANKING__KEYWORD", "0.6")
    monkeypatch.setenv("HARNESS_MEMORY_MAINTENANCE__LEASE_SECONDS", "15")
    s = from_environment()
    assert s.extra_types == ["discovery", "plan"] and s.techniques == ["fresh_start", "escalate"]
    assert s.ranking.keyword == 0.6 and s.maintenance.lease_seconds == 15
    assert Settings(extra_types=["a", "b"]).extra_types == ["a", "b"]  # a list given directly is kept


def test_a_bad_environment_value_is_a_configuration_error_naming_the_setting(monkeypatch):
    monkeypatch.setenv("HARNESS_MEMORY_MAX_TAGS", "0")
    with pytest.raises(ConfigurationError, match="invalid HARNESS_MEMORY_\\* settings: max_tags: "):
        from_environment()
    monkeypatch.delenv("HARNESS_MEMORY_MAX_TAGS")
    monkeypatch.setenv("HARNESS_MEMORY_TECHNIQUE_COSTS", "{not json")
    with pytest.raises(ConfigurationError, match="invalid HARNESS_MEMORY_\\* settings: .*technique_costs"):
        from_environment()


def test_the_default_database_lives_in_the_users_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db_path() == tmp_path / "harness-memory" / "memory.db"
    assert Settings().db == tmp_path / "harness-memory" / "memory.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "harness-memory" / "memory.db"
    monkeypatch.setenv("XDG_DATA_HOME", "")  # empty: as if unset
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "harness-memory" / "memory.db"


def test_a_configuration_error_lists_at_most_ten_problems(monkeypatch):
    fields = [
        "MAX_TAGS",
        "MAX_LIMIT",
        "MAX_CONTENT_BYTES",
        "MAX_TAG_LENGTH",
        "MAX_RETRIES",
        "PROMPT_BUDGET_CHARS",
        "API_MAX_BODY_BYTES",
        "POOL_SIZE",
        "KEYWORD_POSTING_BUDGET",
        "PRIOR_STRENGTH",
        "CONNECT_TIMEOUT",
        "NEAR_DUPLICATE_THRESHOLD",
    ]
    for f in fields:
        monkeypatch.setenv(f"HARNESS_MEMORY_{f}", "0")
    with pytest.raises(ConfigurationError) as err:
        from_environment()
    listed = str(err.value).split("settings: ", 1)[1].split("; ")
    assert len(listed) == 10 and all(p.split(":")[0].upper() in fields for p in listed)
