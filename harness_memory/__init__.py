"""harness-memory: a learning-memory plugin for task harnesses."""

from .embedders import Embedder, HashingEmbedder, OpenAICompatibleEmbedder, SentenceTransformerEmbedder, embedder_from_name
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
    SummariserError,
    UnknownMemoryTypeError,
)
from .error_signatures import ErrorSignature
from .fixes import FixEvidence
from .ledger import Attempt, TechniqueDecision, TechniqueEstimate
from .memory_types import BUILTIN_TYPES
from .models import Memory, RecallHit, ScoreBreakdown
from .portability import ImportReport
from .settings import RankingWeights, Settings
from .store import MemoryStore
from .documents import Document, DocumentReport
from .summarisers import Normalised, Normaliser, OpenAICompatibleSummariser, Summariser, SummariserNormaliser
from .tool_calls import ToolCall, ToolFailure, ToolMetrics
from .watch import MarkdownWatcher, WatchEvent

__version__ = "0.1.0"

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
