"""harness-memory: a learning-memory plugin for task harnesses.

Names are re-exported lazily (PEP 562): ``import harness_memory`` costs almost nothing, and a
name's module is imported on first use, so a command line call imports only what it needs.
"""

import importlib as _importlib
import typing as _typing

__version__ = "0.1.0"

_EXPORTS = {
    "Attempt": "ledger",
    "BUILTIN_TYPES": "memory_types",
    "ConfigurationError": "errors",
    "ContentTooLargeError": "errors",
    "DatabaseLockedError": "errors",
    "DatabaseOpenError": "errors",
    "DatabaseReadOnlyError": "errors",
    "DatabaseTooNewError": "errors",
    "Document": "documents",
    "DocumentReport": "documents",
    "Embedder": "embedders",
    "EmbedderError": "errors",
    "EmbedderMismatchError": "errors",
    "ErrorSignature": "error_signatures",
    "FileAccessError": "errors",
    "FixEvidence": "fixes",
    "HarnessMemoryError": "errors",
    "HashingEmbedder": "embedders",
    "ImportFormatError": "errors",
    "ImportReport": "portability",
    "InvalidInputError": "errors",
    "MarkdownWatcher": "watch",
    "Memory": "models",
    "MemoryNotFoundError": "errors",
    "MemoryStore": "store",
    "Normalised": "summarisers",
    "Normaliser": "summarisers",
    "OpenAICompatibleEmbedder": "embedders",
    "OpenAICompatibleSummariser": "summarisers",
    "RankingWeights": "settings",
    "RecallHit": "models",
    "SchemaError": "errors",
    "ScoreBreakdown": "models",
    "SentenceTransformerEmbedder": "embedders",
    "Settings": "settings",
    "StorageError": "errors",
    "StoreClosedError": "errors",
    "Summariser": "summarisers",
    "SummariserError": "errors",
    "SummariserNormaliser": "summarisers",
    "TechniqueDecision": "ledger",
    "TechniqueEstimate": "ledger",
    "ToolCall": "tool_calls",
    "ToolFailure": "tool_calls",
    "ToolMetrics": "tool_calls",
    "UnknownMemoryTypeError": "errors",
    "WatchEvent": "watch",
    "embedder_from_name": "embedders",
}

__all__ = [
    "Attempt",
    "BUILTIN_TYPES",
    "ConfigurationError",
    "ContentTooLargeError",
    "DatabaseLockedError",
    "DatabaseOpenError",
    "DatabaseReadOnlyError",
    "DatabaseTooNewError",
    "Document",
    "DocumentReport",
    "Embedder",
    "EmbedderError",
    "EmbedderMismatchError",
    "ErrorSignature",
    "FileAccessError",
    "FixEvidence",
    "HarnessMemoryError",
    "HashingEmbedder",
    "ImportFormatError",
    "ImportReport",
    "InvalidInputError",
    "MarkdownWatcher",
    "Memory",
    "MemoryNotFoundError",
    "MemoryStore",
    "Normalised",
    "Normaliser",
    "OpenAICompatibleEmbedder",
    "OpenAICompatibleSummariser",
    "RankingWeights",
    "RecallHit",
    "SchemaError",
    "ScoreBreakdown",
    "SentenceTransformerEmbedder",
    "Settings",
    "StorageError",
    "StoreClosedError",
    "Summariser",
    "SummariserError",
    "SummariserNormaliser",
    "TechniqueDecision",
    "TechniqueEstimate",
    "ToolCall",
    "ToolFailure",
    "ToolMetrics",
    "UnknownMemoryTypeError",
    "WatchEvent",
    "embedder_from_name",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if _typing.TYPE_CHECKING:
    from .documents import Document, DocumentReport
    from .embedders import (
        Embedder,
        HashingEmbedder,
        OpenAICompatibleEmbedder,
        SentenceTransformerEmbedder,
        embedder_from_name,
    )
    from .error_signatures import ErrorSignature
    from .errors import (
        ConfigurationError,
        ContentTooLargeError,
        DatabaseLockedError,
        DatabaseOpenError,
        DatabaseReadOnlyError,
        DatabaseTooNewError,
        EmbedderError,
        EmbedderMismatchError,
        FileAccessError,
        HarnessMemoryError,
        ImportFormatError,
        InvalidInputError,
        MemoryNotFoundError,
        SchemaError,
        StorageError,
        StoreClosedError,
        SummariserError,
        UnknownMemoryTypeError,
    )
    from .fixes import FixEvidence
    from .ledger import Attempt, TechniqueDecision, TechniqueEstimate
    from .memory_types import BUILTIN_TYPES
    from .models import Memory, RecallHit, ScoreBreakdown
    from .portability import ImportReport
    from .settings import RankingWeights, Settings
    from .store import MemoryStore
    from .summarisers import Normalised, Normaliser, OpenAICompatibleSummariser, Summariser, SummariserNormaliser
    from .tool_calls import ToolCall, ToolFailure, ToolMetrics
    from .watch import MarkdownWatcher, WatchEvent
