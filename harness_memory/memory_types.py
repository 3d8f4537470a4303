"""The memory-type registry: built-ins plus what a harness registers in its settings."""

from __future__ import annotations

import re

from .errors import InvalidInputError, UnknownMemoryTypeError

__all__ = ["BUILTIN_TYPES", "TypeRegistry"]

#: The five learning types, ``context`` for short-lived task context (set_task_context), ``episode``
#: for the events of a thread and ``fact`` for what reflect() keeps of them (docs/episodes.md),
#: ``document`` for the chunks of added documents (docs/documents.md).
BUILTIN_TYPES = ("success", "failure", "decision", "pattern", "preference", "context", "episode", "fact", "document")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


class TypeRegistry:
    def __init__(self, extra: list[str] | tuple[str, ...] = ()):
        types = list(BUILTIN_TYPES)
        for name in extra:
            if not isinstance(name, str) or not _NAME.match(name):
                raise InvalidInputError(f"memory type names are lower-case identifiers (a-z, 0-9, _), got {name!r}")
            if name not in types:
                types.append(name)
        self._types = tuple(types)

    @property
    def names(self) -> tuple[str, ...]:
        return self._types

    def check(self, name: object) -> str:
        if not isinstance(name, str):
            raise InvalidInputError(f"a memory type must be a string, got {type(name).__name__}")
        if name not in self._types:
            raise UnknownMemoryTypeError(name[:200], list(self._types))
        return name

    def __contains__(self, name: object) -> bool:
        return name in self._types
