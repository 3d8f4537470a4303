"""Configuration, read from ``HARNESS_MEMORY_*`` environment variables (pydantic-settings).

Every field can also be passed to :class:`Settings` directly. Nested ranking weights use
``HARNESS_MEMORY_RANKING__KEYWORD=0.6`` style variables.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from .errors import ConfigurationError

__all__ = [
    "Settings",
    "RankingWeights",
    "ConfidenceWeights",
    "MaintenanceSettings",
    "default_db_path",
    "from_environment",
]


def default_db_path() -> Path:
    """The per-user default database: ``$XDG_DATA_HOME/harness-memory/memory.db``.

    Falls back to ``~/.local/share/harness-memory/memory.db`` when ``XDG_DATA_HOME`` is unset.
    """
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "harness-memory" / "memory.db"


class RankingWeights(BaseModel):
    """How recall fuses its signals. Chosen by measurement on LoCoMo (see docs/ranking.md).

    The *match* part is a weighted mean of the active channels (a channel is active when
    the query gives it something to match on); the *prior* part scales it by what we know
    about the memory itself.
    """

    vector: float = Field(0.25, ge=0)
    keyword: float = Field(0.75, ge=0)
    tags: float = Field(0.3, ge=0)
    signature: float = Field(0.5, ge=0)
    # prior: score = match * (1 - prior_weight + prior_weight * prior)
    prior_weight: float = Field(0.3, ge=0, le=1)
    usefulness: float = Field(0.5, ge=0)
    recency: float = Field(0.25, ge=0)
    importance: float = Field(0.25, ge=0)
    recency_half_life_days: float = Field(30.0, gt=0)
    # Beta prior of the usefulness estimate: a never-applied memory scores a/(a+b).
    usefulness_prior_successes: float = Field(1.0, gt=0)
    usefulness_prior_failures: float = Field(1.0, gt=0)


class ConfidenceWeights(BaseModel):
    """How a recall hit's confidence is computed, and the injection gate (see harness_memory/confidence.py).

    The text coefficients were fit by logistic regression in ``benchmarks/gate.py`` (LoCoMo,
    classes weighted equally); ``inject_min`` is the largest gate that keeps 92% of the ungated top 8's evidence recall
    there; the procedure's leave-one-conversation-out figures are in docs/ranking.md."""

    intercept: float = -2.99
    unseen: float = Field(-8.44, description="weight of the share of query words the store has never seen")
    best_keyword: float = Field(5.48, description="weight of the best hit's BM25 over the query words' summed IDF")
    best_vector: float = Field(9.74, description="weight of the best candidate's cosine similarity")
    vector: float = Field(2.67, description="weight of this hit's cosine similarity")
    signature: float = Field(
        0.9, ge=0, le=1, description="an exact signature match lifts the confidence to at least this"
    )
    tags: float = Field(0.9, ge=0, le=1, description="the asked tags all shared (Jaccard 1) lift it to at least this")
    inject_min: float = Field(
        0.44,
        ge=0,
        le=1,
        description="the gate: on_task_start, MCP and REST inject only hits with at least this confidence (0: no gate)",
    )


class MaintenanceSettings(BaseModel):
    """Decay, archiving, expiry, consolidation, compaction and their schedules."""

    decay_rate_per_day: float = Field(0.01, ge=0, lt=1, description="relevance lost per day without access")
    decay_rates: dict[str, float] = Field(default_factory=dict, description="per-type daily rates (0: exempt)")
    decay_floor: float = Field(0.1, ge=0, le=1)
    decay_exempt_types: list[str] = Field(default_factory=lambda: ["decision"])
    archive_after_days: float = Field(90, gt=0, description="unused this long and below archive_below: archived")
    archive_below: float = Field(0.2, ge=0, le=1)
    archived_relevance: float = Field(0.05, ge=0, le=1)
    access_log_retention_days: float = Field(90, gt=0)
    tool_call_retention_days: float = Field(30, gt=0, description="the expire job deletes tool calls older than this")
    reflect_idle_minutes: float = Field(
        30,
        gt=0,
        description="the reflect job reflects threads with no new episode "
        "for this long (the job is off unless scheduled)",
    )
    consolidate_min_members: int = Field(3, ge=2)
    consolidate_similarity: float = Field(0.75, gt=0, le=1, description="cosine a member needs to its cluster")
    consolidate_growth_trigger: int = Field(1000, ge=1, description="consolidate a namespace grown by this many")
    compact_sparse_ratio: float = Field(0.25, gt=0, lt=1, description="rebuild vectors when this share is dead")
    vector_changes_keep: int = Field(100_000, ge=1000)
    vector_index: Literal["hnsw", "ivfflat"] | None = Field(
        None,
        description="PostgreSQL: the vector index compact keeps (none: the store's own); ivfflat from 100,000 "
        "vectors: cheap inserts and a higher overlap with exact search, slower searches (docs/backends.md)",
    )
    job_batch_seconds: float = Field(
        0.05,
        gt=0,
        le=10,
        description="bulk jobs and deletes commit in batches sized to hold the write lock about this long",
    )
    lease_seconds: float = Field(
        60,
        gt=0,
        description="a lease not renewed for this long has expired (a holder "
        "on another host died); the live holder renews it",
    )
    lease_heartbeat_seconds: float | None = Field(
        None, gt=0, description="how often a running job renews its lease (default: a third of lease_seconds)"
    )
    misfire_grace_seconds: int = Field(6 * 3600, ge=1)
    schedules: dict[str, str] = Field(
        default_factory=lambda: {
            "decay": "cron:0 3 * * *",
            "expire": "interval:3600",
            "consolidate": "cron:0 4 * * 0",
            "compact": "cron:0 5 * * 0",
            "backfill": "interval:900",
            "consolidate_growth": "interval:600",
            "resign": "interval:3600",
        }
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HARNESS_MEMORY_", env_nested_delimiter="__", extra="ignore")

    db: str | Path = Field(
        default_factory=default_db_path,
        description="database: a file path, sqlite:///path, or postgresql://user@host/dbname",
    )
    namespace: str = Field("default", min_length=1, max_length=200)
    embedder: str = Field(
        "hashing", description="embedder name: hashing[:DIM], sentence-transformers:MODEL, openai:MODEL"
    )
    embedder_base_url: str | None = Field(None, description="base URL of an OpenAI-compatible embeddings API")
    embedder_api_key: str | None = None
    extra_types: Annotated[list[str], NoDecode] = Field(default_factory=list, description="memory types to register")
    near_duplicate_threshold: float = Field(0.95, gt=0, le=1.0)
    max_content_bytes: int = Field(32 * 1024, gt=0)
    max_tags: int = Field(32, gt=0)
    max_tag_length: int = Field(64, gt=0)
    max_limit: int = Field(1000, gt=0)
    redact_secrets: bool = True
    embed_failure: str = Field(
        "pending",
        pattern="^(pending|raise)$",
        description="on embedder failure: store keyword-only with a pending flag, or raise",
    )
    vector_search: str = Field(
        "memory",
        pattern="^(memory|vec0)$",
        description="'memory': in-process binary-code index with exact rerank; 'vec0': sqlite-vec KNN",
    )
    keyword_posting_budget: int | None = Field(
        1500, gt=0, description="recall keeps the rarest query terms whose document frequencies sum to this (None: all)"
    )
    techniques: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["prompt_restructure", "decomposition", "fresh_start", "escalate"],
        description="the default technique ladder, in order (comma-separated in the environment)",
    )
    technique_costs: dict[str, float] = Field(
        default_factory=dict, description="relative cost per technique (default 1)"
    )
    max_retries: int = Field(5, ge=1, description="attempts after which a task escalates")
    success_floor: float = Field(0.05, ge=0, le=1, description="escalate when no technique's estimate clears this")
    prior_strength: float = Field(4.0, gt=0, description="pseudo-observations a coarser level lends a finer one")
    exploration: str = Field(
        "ucb",
        pattern="^(thompson|ucb)$",
        description="ucb: posterior mean plus ucb_c standard deviations (chosen by the retry simulator); thompson: a posterior draw",
    )
    ucb_c: float = Field(0.25, ge=0)
    prompt_budget_chars: int = Field(6000, gt=0, description="size budget of on_task_start's prompt section")
    tool_result_max_bytes: int = Field(
        2000,
        ge=200,
        le=1 << 20,
        description="a tool call's result (and error) "
        "is kept as a summary of at most this many bytes; the full size is recorded",
    )
    tool_parameters_max_bytes: int = Field(
        4000,
        ge=200,
        le=1 << 20,
        description="a tool call's parameters (JSON) beyond this many bytes are kept as a bounded preview",
    )
    summariser: str | None = Field(
        None,
        description="a summariser for reflection and the reflect job: "
        "openai:MODEL (an OpenAI-compatible chat endpoint); unset: offline",
    )
    summariser_base_url: str | None = Field(
        None, description="base URL of the summariser's chat API (e.g. http://localhost:11434/v1 for Ollama)"
    )
    summariser_api_key: str | None = None
    document_chunk_chars: int = Field(
        1500,
        ge=200,
        le=32_768,
        description="documents are split on their structure into chunks of at most this many characters",
    )
    watch_debounce_seconds: float = Field(
        1.0, ge=0, le=3600, description="the MEMORY.md watcher imports a file once it has been quiet this long"
    )
    markdown_write_back: bool = Field(
        False, description="the MEMORY.md watcher writes memories changed through the API back to their agent's file"
    )
    fix_similar_min: float | None = Field(
        0.45,
        gt=0,
        le=1.0,
        description="also offer the fixes of errors whose decisive line, or failure block, is this similar (word-set "
        "Jaccard) to the asked one's, where the fix carried over between errors (fix_similar_breadth); None: only fixes "
        "linked to the error's "
        "own or an aliased signature, its task's or its origin's (chosen by leave-one-source-out in "
        "benchmarks/fix_recall.py, see docs/fixes.md)",
    )
    fix_similar_breadth: int | None = Field(
        2,
        ge=1,
        le=1000,
        description="a fix found only through a similar error (fix_similar_min) is offered when its kind worked for at "
        "least this many distinct error signatures: a remedy known to carry over from one error to another (a re-run, "
        "a reinstall); a fix known for fewer (a patch of one bug) is its own errors', and an error that only looks "
        "like one of them is, as often as not, another bug. None: no such condition",
    )
    fix_general_min: int | None = Field(
        None,
        ge=1,
        le=1000,
        description="also offer the fix kinds that fixed at least this many distinct errors of the asked error's "
        "category, ranked after the fixes linked to the error itself (level general); None: off",
    )
    fix_task_min: int | None = Field(
        5,
        ge=1,
        le=1000,
        description="offer a fix kind that fixed the same task (its signature) for at least this many distinct "
        "errors, ranked after the fixes linked to the error itself (level task); None: off (docs/fixes.md)",
    )
    fix_task_share: float = Field(
        0.0,
        ge=0,
        le=1.0,
        description="a same-task (or same-origin) fix kind must also hold at least this share of the fixes that "
        "worked for the task (or origin)",
    )
    fix_origin_min: int | None = Field(
        5,
        ge=1,
        le=1000,
        description="offer a fix kind that fixed at least this many distinct errors whose stack traces started in "
        "the same place (ErrorSignature.origin: the same script or test class), after the error's own links and the "
        "task's (level origin); None: off (docs/fixes.md)",
    )
    fix_distinct_min: int | None = Field(
        3,
        ge=2,
        le=1000,
        description="an error whose own links (exact and alias) name at least this many different fix kinds, none "
        "of them backed twice (taught twice or credited helpful), gets none of them: every time it was fixed, it was "
        "fixed by something different, so its signature does not predict the fix; None: off (docs/fixes.md)",
    )
    fix_recurrence: bool = Field(
        False,
        description="the same error again: a fix linked to the asked signature whose taught error had the very same "
        "decisive line and key frame (values included), in a template with variable parts, is offered even when the "
        "signature's other evidence withholds it (fix_distinct_min, credits that net negative on the signature); "
        "off by default (docs/fixes.md)",
    )
    fix_once_same_values: bool = Field(
        False,
        description="a fix backed once (taught once, never credited helpful) for an error whose template has variable "
        "parts is offered only for the same values (the very same decisive line and key frame); off (default): for any values "
        "(docs/fixes.md)",
    )
    fix_nearest_min: float | None = Field(
        0.4,
        gt=0,
        le=1.0,
        description="an error whose own links were judged unpredictive (fix_distinct_min) still gets the fix whose "
        "taught error is the nearest to it (character-trigram Jaccard of the decisive lines) when that is at least this "
        'and ahead of every other fix\'s by fix_nearest_margin; None: off (docs/fixes.md, "The nearest instance")',
    )
    fix_nearest_margin: float = Field(
        0.1, ge=0, le=1.0, description="how far ahead of the other fixes' nearest the fix_nearest_min instance must be"
    )
    fix_once_similar_min: float | None = Field(
        0.6,
        gt=0,
        le=1.0,
        description="a fix backed once at the error's own signature (taught once, never credited helpful) is offered "
        "only when its taught error's decisive line is at least this similar (character-trigram Jaccard) to the asked "
        'one; None: for any instance of the signature (docs/fixes.md, "The nearest instance")',
    )
    fix_instance_credits: bool = Field(
        False,
        description="opt-in: an unhelpful apply() credit is left out for an error clearly nearer the instance the fix "
        "was taught for than the one the credit was given for (character-trigram Jaccard of the decisive lines, and "
        "of the failure blocks where the lines are alike); off: it counts for every error of the signature "
        '(docs/fixes.md, "Refuted for another instance")',
    )
    api_token: str | None = Field(None, description="one bearer token for the REST API (agent from X-Agent-Id)")
    api_tokens: dict[str, str] = Field(
        default_factory=dict, description="bearer token -> agent id (agent fixed by token)"
    )
    api_admin_token: str | None = Field(
        None,
        description="a bearer token that may read every agent's stats and "
        "any task's techniques over REST (agent from X-Agent-Id)",
    )
    api_max_body_bytes: int = Field(1 << 20, gt=0)
    mcp_agent_id: str = Field("mcp-agent", min_length=1, max_length=200, description="the MCP server's agent identity")
    busy_timeout_ms: int = Field(30_000, ge=0)
    connect_timeout: float = Field(10.0, gt=0, le=3600, description="PostgreSQL: seconds to wait for a connection")
    pool_size: int = Field(8, ge=1, le=1000, description="PostgreSQL: connections per process (psycopg_pool max_size)")
    recall_boost: float = Field(0.02, ge=0, le=1, description="relevance gained by a memory each time it is recalled")
    ranking: RankingWeights = Field(default_factory=RankingWeights)
    confidence: ConfidenceWeights = Field(default_factory=ConfidenceWeights)
    maintenance: MaintenanceSettings = Field(default_factory=MaintenanceSettings)

    @field_validator(
        "fix_task_min",
        "fix_origin_min",
        "fix_distinct_min",
        "fix_nearest_min",
        "fix_once_similar_min",
        "fix_similar_min",
        "fix_similar_breadth",
        mode="before",
    )
    @classmethod
    def _off(cls, v: Any) -> Any:
        # HARNESS_MEMORY_FIX_TASK_MIN=off turns the same-task tier off (its default is on); FIX_ORIGIN_MIN,
        # FIX_DISTINCT_MIN, FIX_NEAREST_MIN, FIX_ONCE_SIMILAR_MIN, FIX_SIMILAR_MIN and FIX_SIMILAR_BREADTH too
        return None if isinstance(v, str) and v.strip().lower() in ("off", "none") else v

    @field_validator("extra_types", "techniques", mode="before")
    @classmethod
    def _split_types(cls, v: Any) -> Any:
        if isinstance(v, str):
            return [t.strip() for t in v.split(",") if t.strip()]
        return v


def _where(loc: tuple[Any, ...]) -> str:
    """A validation error's location, by field names only: a mapping's key is data (``api_tokens`` is keyed by the
    tokens themselves), so it is written ``<key>``, never as given."""
    out: list[str] = []
    fields: dict[str, Any] | None = Settings.model_fields
    for part in loc:
        if fields is not None and isinstance(part, str) and part in fields:
            out.append(part)
            ann = fields[part].annotation
            fields = ann.model_fields if isinstance(ann, type) and issubclass(ann, BaseModel) else None
        else:
            out.append("<key>")
            fields = None
    return ".".join(out)


def from_environment() -> Settings:
    """Settings from the environment (HARNESS_MEMORY_*); a bad value is a ConfigurationError naming it (its field,
    never its value nor a mapping's key)."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"{_where(tuple(e.get('loc', ())))}: {e.get('msg', 'invalid')}"
            for e in exc.errors(include_url=False, include_input=False)[:10]
        )
        raise ConfigurationError(f"invalid HARNESS_MEMORY_* settings: {problems}") from None
    except SettingsError as exc:
        raise ConfigurationError(f"invalid HARNESS_MEMORY_* settings: {exc}") from None
