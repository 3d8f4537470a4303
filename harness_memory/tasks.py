"""Task signatures: a stable key for "this kind of task", shared by similar tasks.

``category:agent_type:effort:term-term-term``: the coarse fields first, so tasks of one
kind share a prefix, then the key terms of the title (and of the description when the title
is short), lower-cased, without stop words, lightly stemmed and sorted, so the signature
does not change with word order, case or punctuation. Each field and each term is cut at 40
characters, so a signature stays within a few hundred bytes whatever the title holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .errors import InvalidInputError
from .redact import MARK, redact
from .sqlite_backend import query_terms

__all__ = ["task_signature"]

_FIELD = re.compile(r"[^a-z0-9_.-]+")
_EXTRA_STOP = frozenset(
    "add added adding fix fixed fixing make making update updated use using new please task "
    "implement implementing support".split()
)


_MAX_TERM = 40  # characters of one term (a hash or a URL in a title must not outgrow the signature's bound)


def _stem(w: str) -> str:
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            return w[: len(w) - len(suffix)] + keep
    return w


def _field(task: Any, *names: str) -> Any:
    for n in names:
        v = task.get(n) if isinstance(task, Mapping) else getattr(task, n, None)
        if v is not None:
            return v
    return None


def _norm(v: Any) -> str:
    if v is None:
        return "any"
    s = _FIELD.sub("-", str(v).strip().lower()).strip("-")
    return s[:40] or "any"


_REDACTED = re.compile(re.escape(MARK) + r":[\w-]{1,40}\]")  # the marker redact puts in a secret's place


def _without_secrets(text: str) -> str:
    """``text`` with its secrets (``redact``'s) cut out, markers and all."""
    if not text:
        return text
    out, kinds = redact(text)
    return _REDACTED.sub(" ", out) if kinds else text


def task_signature(task: Any, *, max_terms: int = 6) -> str:
    """Signature of a task given as a mapping/object (category, agent_type or owner, effort,
    title, description) or as a plain title string."""
    if isinstance(task, str):
        title, desc, cat, agent, effort = task, "", None, None, None
    elif task is None or isinstance(task, (bytes, int, float, bool)):
        raise InvalidInputError("task must be a title string, a mapping or an object with a title")
    else:
        title = _field(task, "title", "name") or ""
        desc = _field(task, "description", "body") or ""
        cat = _field(task, "category", "type", "kind")
        agent = _field(task, "agent_type", "owner", "agent")
        effort = _field(task, "effort", "size", "estimate")
    if not isinstance(title, str) or not isinstance(desc, str):
        raise InvalidInputError("task title and description must be strings")
    # a secret in a title (a token in a command line) is no term of the signature, which is stored and shown
    title, desc = _without_secrets(title), _without_secrets(desc)
    terms = [t for t in dict.fromkeys(_stem(w)[:_MAX_TERM] for w in query_terms(title)) if t not in _EXTRA_STOP]
    if len(terms) < 3 and desc:
        more = [t for t in dict.fromkeys(_stem(w)[:_MAX_TERM] for w in query_terms(desc)) if t not in _EXTRA_STOP]
        terms += [t for t in more if t not in terms][: 3 - len(terms)]
    if not terms and cat is None:
        raise InvalidInputError("task has no title terms and no category to sign")
    key = "-".join(sorted(terms[:max_terms])) or "any"
    return f"{_norm(cat)}:{_norm(agent)}:{_norm(effort)}:{key}"
