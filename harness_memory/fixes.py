"""Error→fix links: what fixed which error, with the evidence, and advice ranked by it.

A *fix* is a memory (usually a ``success``) linked to every error signature it was taught
for (``fix_links``): per link, how often it worked, how often it did not, and the ``apply()``
credits given for that error. Fixes of the same *kind* (the fix text masked the way error
messages are, so ``bin/test a/test_x.py`` and ``bin/test b/test_y.py`` are one kind)
aggregate: their evidence adds up and the newest variant stands for them.

Ranking (``rank``): only fixes linked to the error's own signature or to a signature linked
to it by the template miner are candidates, so an error never seen gets no advice. Among
them: exact signature before alias; then the net evidence (worked − did not work, plus the
memory's ``apply()`` credits, helpful − unhelpful); recency breaks ties. Text similarity
between fix and error plays no part: words shared with the error are not evidence.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from .error_signatures import mask_params, tokenize
from .models import MEMORY_COLUMNS, Memory, row_to_memory

if TYPE_CHECKING:  # pragma: no cover
    from .core import Core
    from .error_signatures import ErrorSignature

__all__ = ["FixEvidence", "fix_kind", "link", "credit", "rank"]


def fix_kind(text: str) -> str:
    """The kind of a fix: its text masked (paths, numbers, quoted values, hosts...) and hashed."""
    masked, _ = mask_params(" ".join(text.split())[:4000])
    return "fix_" + hashlib.sha256(" ".join(tokenize(masked)).encode()).hexdigest()[:16]


class FixEvidence(BaseModel):
    """One fix offered for an error, with the evidence that ranked it."""

    memory: Memory = Field(description="the newest variant of the fix kind linked to this error")
    kind: str
    level: str = Field(description="exact: linked to this signature; alias: to a signature linked to it")
    worked: int = Field(description="times a fix of this kind was taught as fixing this error")
    failed: int = Field(description="times it was taught as not fixing it")
    helpful: int = Field(description="apply() credits: helpful (this kind, any error)")
    unhelpful: int = Field(description="apply() credits: not helpful")
    variants: int = Field(description="distinct fix texts of this kind")
    score: float

    def explain(self) -> str:
        return (f"{self.level} signature match; worked {self.worked}x, did not work {self.failed}x; "
                f"credits +{self.helpful}/-{self.unhelpful}; {self.variants} variant(s) of this fix; "
                f"score {self.score:.2f}")


def link(core: "Core", memory_id: int, signature: str, category: str | None, *, worked: bool,
         now: float) -> None:
    """Add one worked / did-not-work observation to a link (caller holds the write transaction)."""
    core.backend.conn.execute(
        "INSERT INTO fix_links(memory_id, error_signature, error_category, worked, failed, first_at, last_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(memory_id, error_signature) DO UPDATE SET "
        "worked = worked + excluded.worked, failed = failed + excluded.failed, last_at = excluded.last_at, "
        "error_category = COALESCE(error_category, excluded.error_category)",
        (memory_id, signature, category, int(worked), int(not worked), now, now))


def credit(core: "Core", memory_id: int, signatures: list[str], helpful: bool, now: float) -> int:
    """An apply() credit on the links of ``memory_id`` to these signatures; returns rows touched."""
    if not signatures:
        return 0
    col = "helpful" if helpful else "unhelpful"
    cur = core.backend.conn.execute(
        f"UPDATE fix_links SET {col} = {col} + 1, last_at = ? WHERE memory_id = ? AND error_signature IN "
        f"({','.join('?' * len(signatures))})", (now, memory_id, *signatures))
    return cur.rowcount


def rank(core: "Core", signed: "ErrorSignature", *, agent_id: str | None, namespace: str, limit: int = 5,
         min_score: float = 0.5) -> tuple[list[FixEvidence], list[FixEvidence]]:
    """``(fixes, did_not_work)`` for an error, best first (see the module docstring)."""
    aliases = core.miner.aliases(core.miner.canonical(signed.id))
    if signed.id not in aliases:
        aliases.append(signed.id)
    vis, vparams = core.visibility(agent_id, True)
    ph = ",".join("?" * len(aliases))
    rows = core.backend.execute(
        f"SELECT l.memory_id, l.error_signature, l.worked, l.failed, l.helpful, l.unhelpful, l.last_at, "
        f"m.fix_kind, m.times_applied, m.times_successful FROM fix_links l JOIN memories m ON m.id = l.memory_id "
        f"WHERE l.error_signature IN ({ph}) AND m.namespace = ? AND {vis} AND m.archived = 0 "
        f"AND (m.expires_at IS NULL OR m.expires_at > ?)",
        (*aliases, namespace, *vparams, core.now())).fetchall()
    if not rows:
        return [], []
    exact = {signed.id, core.miner.canonical(signed.id)}
    kinds: dict[str, dict[str, Any]] = defaultdict(lambda: {"worked": 0, "failed": 0, "helpful": 0, "unhelpful": 0,
                                                           "members": {}, "exact": False, "last": 0.0})
    for mid, sig, worked, failed, helpful, unhelpful, last_at, kind, applied, successful in rows:
        k = kinds[kind or f"memory_{mid}"]
        k["worked"] += worked
        k["failed"] += failed
        if mid not in k["members"]:
            # credits: the memory's own apply() record (any error), once per member
            k["helpful"] += successful
            k["unhelpful"] += applied - successful
        k["members"][mid] = max(k["members"].get(mid, 0.0), last_at)
        k["exact"] = k["exact"] or sig in exact
        k["last"] = max(k["last"], last_at)
    fixes, failed = [], []
    for kind, k in kinds.items():
        net = k["worked"] - k["failed"] + 0.5 * (k["helpful"] - k["unhelpful"])
        newest = max(k["members"], key=lambda m: (k["members"][m], m))
        ev = dict(kind=kind, level="exact" if k["exact"] else "alias", worked=k["worked"], failed=k["failed"],
                  helpful=k["helpful"], unhelpful=k["unhelpful"], variants=len(k["members"]), score=net,
                  newest=newest, last=k["last"])
        (fixes if net >= min_score else failed).append(ev)
    fixes.sort(key=lambda e: (e["level"] == "exact", e["score"], e["last"], e["newest"]), reverse=True)
    failed.sort(key=lambda e: (e["score"], -e["last"]))
    fixes, failed = fixes[:limit], failed[:limit]
    mems = {r[0]: row_to_memory(r) for r in core.backend.execute(
        f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id IN "
        f"({','.join('?' * len(fixes + failed)) or 'NULL'})", [e["newest"] for e in fixes + failed])}

    def build(e: dict[str, Any]) -> FixEvidence:
        return FixEvidence(memory=mems[e["newest"]], **{k: v for k, v in e.items() if k not in ("newest", "last")})

    return [build(e) for e in fixes if e["newest"] in mems], [build(e) for e in failed if e["newest"] in mems]
