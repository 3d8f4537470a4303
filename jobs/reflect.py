"""Reflect: turn the episodes of threads idle for ``maintenance.reflect_idle_minutes`` into durable
facts and patterns (see harness_memory/episodes.py). Off unless scheduled
(``maintenance.schedules["reflect"] = "interval:600"``). Uses ``settings.summariser`` when set."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness_memory import episodes

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.store import MemoryStore
    from harness_memory.summarisers import OpenAICompatibleSummariser


def summariser_from_settings(settings: Any) -> OpenAICompatibleSummariser | None:
    """The summariser ``settings.summariser`` names (``openai:MODEL``), or None."""
    from harness_memory.errors import ConfigurationError
    from harness_memory.summarisers import OpenAICompatibleSummariser

    name = settings.summariser
    if not name:
        return None
    kind, _, model = name.partition(":")
    if kind != "openai" or not model:
        raise ConfigurationError(f"summariser must be openai:MODEL, got {name[:100]!r}")
    return OpenAICompatibleSummariser(
        model, base_url=settings.summariser_base_url or "https://api.openai.com/v1", api_key=settings.summariser_api_key
    )


def reflect(
    store: MemoryStore, *, dry_run: bool = False, namespace: str | None = None, summariser: Any = None, **_: object
) -> dict[str, Any]:
    core = store._core
    idle = store.settings.maintenance.reflect_idle_minutes * 60
    cutoff = core.now() - idle
    conds, params = ["memory_type = 'episode'", "thread_id IS NOT NULL", "reflected_at IS NULL", "archived = 0"], []
    if namespace is not None:
        conds.append("namespace = ?")
        params.append(namespace)
    rows = core.backend.execute(
        f"SELECT namespace, thread_id, MAX(created_at) FROM memories WHERE {' AND '.join(conds)} "
        "GROUP BY namespace, thread_id",
        params,
    ).fetchall()
    idle_threads = [(ns, t) for ns, t, last in rows if last <= cutoff]
    if dry_run:
        return {"threads": len(idle_threads), "active_threads": len(rows) - len(idle_threads)}
    if summariser is None:
        summariser = summariser_from_settings(store.settings)
    written = 0
    for ns in sorted({ns for ns, _ in idle_threads}):
        written += len(
            episodes.reflect(
                store, thread_id=None, namespace=ns, agent_id=None, summariser=summariser, idle_seconds=idle
            )
        )
    return {"threads": len(idle_threads), "memories": written}
