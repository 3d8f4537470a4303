"""Error signatures: the masked template of an error message and a short stable id.

This is the simple normaliser: it picks the error line out of a traceback or log and
masks its variable parts (numbers, hex, ids, paths, URLs, quoted values...). Two errors
that differ only in such values get the same signature.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["error_signature", "mask", "error_excerpt"]

_MASKS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<UUID>"),
    (re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s'\"<>]+", re.I), "<URL>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<TS>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b"), "<IP>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<HEX>"),
    (re.compile(r"\b[0-9a-fA-F]{12,}\b"), "<HASH>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.@+-]+){2,}[\\/]?"), "<PATH>"),
    (re.compile(r"\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'"), "<STR>"),
    (re.compile(r"(?<![A-Za-z_])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"), "<NUM>"),
]
_ERRORISH = re.compile(r"(?:error|exception|fail|fatal|panic|traceback|timed? ?out|denied|refused|not found)", re.I)
_FRAME = re.compile(r"^\s*(?:File \"|at |\.\.\.|\^|~)")


def mask(text: str) -> str:
    """Mask variable parts; idempotent (masking a masked text changes nothing)."""
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    return re.sub(r"\s+", " ", text).strip()


def error_excerpt(text: str) -> str:
    """The line most likely to name the error: the last exception line of a traceback,
    else the first error-looking line, else the first non-empty line."""
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    if any(ln.startswith("Traceback (most recent call last)") for ln in lines):
        for ln in reversed(lines):
            if not _FRAME.match(ln) and not ln.startswith(" "):
                return ln.strip()
    for ln in lines:
        if _ERRORISH.search(ln) and not _FRAME.match(ln):
            return ln.strip()
    return lines[0].strip()


def error_signature(text: str) -> tuple[str, str]:
    """``(signature_id, template)`` for raw error text."""
    template = mask(error_excerpt(text))[:500]
    digest = hashlib.sha256(template.lower().encode()).hexdigest()[:16]
    return f"err_{digest}", template
