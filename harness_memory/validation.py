"""Input checks for every public call. Each raises a typed error before anything is written."""

from __future__ import annotations

import json
import math
import re
import reprlib
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from .errors import ContentTooLargeError, InvalidInputError

if TYPE_CHECKING:  # pragma: no cover
    from pydantic import BaseModel

_M = TypeVar("_M", bound="BaseModel")

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_ID_LEN = 200
MAX_METADATA_BYTES = 64 * 1024
MAX_NESTING = 32  # metadata and imported records: deeper structures are refused, never recursed into
# Timestamps must stay representable as a UTC datetime (years 0001-9999).
MIN_TIMESTAMP = -62135596800.0  # 0001-01-01T00:00:00Z
MAX_TIMESTAMP = 253402300799.0  # 9999-12-31T23:59:59Z
MAX_COUNT = 2**53  # counters (access_count, times_applied, ...): exact in JSON and far inside SQLite's int64


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 3, 60, 60, 5, 5


def show(value: Any) -> str:
    """A short, safe ``repr`` of a caller's value for an error message: bounded in length and
    depth, and never raising (a hostile ``__repr__``, a structure nested thousands deep)."""
    try:
        return _REPR.repr(value)
    except Exception:  # noqa: BLE001 - any failure of the value's own repr: name its type instead
        return f"<{type(value).__name__}>"


def text(value: Any, field: str, *, max_bytes: int, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise InvalidInputError(f"{field} must not contain NUL characters")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{field} is not valid Unicode text (lone surrogates)") from exc
    if size > max_bytes:
        raise ContentTooLargeError(f"{field} is {size} bytes; the limit is {max_bytes} (max_content_bytes)")
    if not allow_empty and not value.strip():
        raise InvalidInputError(f"{field} must not be empty")
    return value


@overload
def ident(value: Any, field: str, *, optional: Literal[False] = False) -> str: ...
@overload
def ident(value: Any, field: str, *, optional: bool) -> str | None: ...
def ident(value: Any, field: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{field} must be a non-empty string")
    if len(value) > MAX_ID_LEN or _CONTROL.search(value) or "\n" in value or "\r" in value:
        raise InvalidInputError(f"{field} must be at most {MAX_ID_LEN} characters without control characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{field} is not valid Unicode text") from exc
    return value


def scope(value: Any) -> str:
    if value not in ("agent", "global"):
        raise InvalidInputError(f"scope must be 'agent' or 'global', got {show(value)}")
    return value


def unit_float(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{field} must be a number in [0, 1]")
    value = float(value)
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidInputError(f"{field} must be in [0, 1], got {value}")
    return value


def tags(value: Any, *, max_tags: int, max_len: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InvalidInputError("tags must be a list of strings (not a single string)")
    out: list[str] = []
    for t in value:
        if not isinstance(t, str):
            raise InvalidInputError(f"every tag must be a string, got {type(t).__name__}")
        norm = " ".join(t.strip().lower().split())
        if not norm:
            raise InvalidInputError("tags must not be empty")
        if len(norm) > max_len or _CONTROL.search(norm):
            raise InvalidInputError(f"tags must be at most {max_len} characters without control characters")
        try:
            norm.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInputError("tags must be valid Unicode text") from exc
        if norm not in out:
            out.append(norm)
    if len(out) > max_tags:
        raise InvalidInputError(f"at most {max_tags} tags are allowed, got {len(out)}")
    return out


def ttl_seconds(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InvalidInputError("ttl must be a positive number of seconds or a timedelta")
    if value > 100 * 365 * 86400:
        raise InvalidInputError("ttl must be at most 100 years")
    return float(value)


def nesting_depth(value: Any, field: str, *, max_depth: int = MAX_NESTING) -> None:
    """Refuse containers nested deeper than ``max_depth`` (iteratively: no recursion to exhaust)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    while stack:
        obj, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(obj, dict):
            children = obj.values()
        elif isinstance(obj, (list, tuple)):
            children = obj
        else:
            continue
        if depth > max_depth:
            raise InvalidInputError(f"{field} is nested more than {max_depth} levels deep")
        seen += 1
        if seen > 1_000_000:
            raise ContentTooLargeError(f"{field} has too many nested containers")
        stack.extend((c, depth + 1) for c in children)


def metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInputError("metadata must be a dict")
    nesting_depth(value, "metadata")
    try:
        encoded = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"metadata must be JSON-serialisable without NaN/inf: {exc}") from exc
    try:
        size = len(encoded.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidInputError("metadata is not valid Unicode text") from exc
    if size > MAX_METADATA_BYTES:
        raise ContentTooLargeError(f"metadata is {size} bytes; the limit is {MAX_METADATA_BYTES}")
    return json.loads(encoded)


def limit(value: Any, *, max_limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= max_limit:
        raise InvalidInputError(f"limit must be an int in [1, {max_limit}]")
    return value


def timestamp(value: Any, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            # a naive datetime means a different instant on every host: refused, never guessed
            raise InvalidInputError(
                f"{field} is a naive datetime (no time zone); pass an aware one, e.g. "
                "datetime.now(timezone.utc) - timedelta(hours=1), or a UNIX timestamp"
            )
        try:
            value = value.timestamp()
        except (OverflowError, ValueError) as exc:
            raise InvalidInputError(f"{field} is out of range") from exc
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{field} must be a datetime or a UNIX timestamp")
    try:
        value = float(value)
    except OverflowError as exc:
        raise InvalidInputError(f"{field} is out of range") from exc
    if not math.isfinite(value) or not MIN_TIMESTAMP <= value <= MAX_TIMESTAMP:
        raise InvalidInputError(f"{field} must be a UNIX timestamp between years 0001 and 9999, got {value!r}")
    return value


def count(value: Any, field: str) -> int:
    """A non-negative counter that fits SQLite's integers (and JSON's exact range)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise InvalidInputError(f"{field} must be an int in [0, {MAX_COUNT}]")
    return value


def number(value: Any, field: str, *, lo: float, hi: float) -> float:
    """A finite number in ``[lo, hi]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{field} must be a number")
    try:
        value = float(value)
    except OverflowError as exc:
        raise InvalidInputError(f"{field} is out of range") from exc
    if not math.isfinite(value) or not lo <= value <= hi:
        raise InvalidInputError(f"{field} must be in [{lo}, {hi}], got {value!r}")
    return value


def channels(value: Any, allowed: Iterable[str] = ("vector", "keyword", "tags", "signature")) -> frozenset[str] | None:
    """Recall channels: ``None`` (all) or a non-empty collection of channel names."""
    allowed = frozenset(allowed)
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InvalidInputError(f"channels must be a collection of names from {sorted(allowed)}")
    chosen = []
    for c in value:
        if not isinstance(c, str) or c not in allowed:
            raise InvalidInputError(f"channels must be a non-empty subset of {sorted(allowed)}")
        chosen.append(c)
    if not chosen:
        raise InvalidInputError(f"channels must be a non-empty subset of {sorted(allowed)}")
    return frozenset(chosen)


def path(value: Any, field: str = "path"):
    """A file path (str or os.PathLike) without NUL characters."""
    import os
    from pathlib import Path

    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise InvalidInputError(f"{field} must be a path (str or os.PathLike), got {type(value).__name__}")
    raw = os.fspath(value) if not isinstance(value, str) else value
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInputError(f"{field} must be a non-empty path")
    try:
        p = Path(value)
    except TypeError as exc:
        raise InvalidInputError(f"{field} must be a path: {exc}") from exc
    s = str(p)
    if "\x00" in s or not s.strip():
        raise InvalidInputError(f"{field} must be a non-empty path without NUL characters")
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{field} is not valid Unicode text") from exc
    return p


def model(cls: type[_M], value: Any, what: str) -> _M:
    """``cls.model_validate(value)`` with pydantic's ValidationError wrapped in InvalidInputError.

    An instance of ``cls`` passes through unchanged. The message names the fields and the
    problems, never the submitted values (they may hold secrets)."""
    from pydantic import ValidationError

    if isinstance(value, cls):
        return value
    try:
        return cls.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e.get('loc', ()))) or what}: {e.get('msg', 'invalid')}"
            for e in exc.errors(include_url=False, include_input=False)[:10]
        )
        raise InvalidInputError(f"invalid {what}: {problems}") from None
    except (RecursionError, OverflowError) as exc:
        raise InvalidInputError(f"invalid {what}: {type(exc).__name__}") from None


def boolean(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{field} must be True or False")
    return value


def memory_id(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or value >= 2**63:
        raise InvalidInputError(f"memory id must be a positive int, got {show(value)}")
    return value


def types_list(value: Any, check) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Iterable):
        raise InvalidInputError("types must be a list of type names")
    out = [check(t) for t in value]
    if not out:
        raise InvalidInputError("types must not be empty (pass None for all types)")
    return list(dict.fromkeys(out))
