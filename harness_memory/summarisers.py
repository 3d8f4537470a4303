"""Summarisers: the one small interface through which harness-memory asks a language model (or
anything else) to condense text — reflection of a thread's episodes into facts
(:meth:`MemoryStore.reflect`) and the optional :class:`Normaliser` of raw text before it is stored.

A :class:`Summariser` has one method, ``summarise(texts, *, instruction) -> str``. Offline
everything works without one (reflection is then extractive). :class:`OpenAICompatibleSummariser`
speaks the chat-completions API of OpenAI, Ollama, vLLM and llama.cpp's server, with the standard
library only. Its failures are :class:`SummariserError`; callers fall back to the offline path
with a warning and store nothing partial.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from .backend import safe_url
from .errors import InvalidInputError, SummariserError

__all__ = [
    "Normalised",
    "Normaliser",
    "OpenAICompatibleSummariser",
    "Summariser",
    "SummariserError",
    "SummariserNormaliser",
]


@runtime_checkable
class Summariser(Protocol):
    """Condense ``texts`` as ``instruction`` asks; return plain text."""

    def summarise(self, texts: Sequence[str], *, instruction: str) -> str: ...


class Normalised(BaseModel):
    """Raw text turned into what is stored: normalised text, a memory type and tags."""

    content: str = Field(min_length=1)
    type: str = Field(min_length=1, max_length=40)
    tags: list[str] = Field(default_factory=list, max_length=32)


@runtime_checkable
class Normaliser(Protocol):
    """Turn raw text (a note, a chat message) into normalised text + type + tags before it is stored."""

    def normalise(self, text: str, *, types: Sequence[str]) -> Normalised: ...


_NORMALISE = (
    "Rewrite the note below as one short, self-contained statement in plain English (no pronouns "
    'without referents, no chatter). Answer with JSON only: {{"content": "...", "type": one of '
    '{types}, "tags": [up to 5 lower-case keywords]}}.'
)


class SummariserNormaliser:
    """A :class:`Normaliser` on any :class:`Summariser` (an LLM answering JSON)."""

    def __init__(self, summariser: Summariser):
        if not isinstance(summariser, Summariser):
            raise InvalidInputError("summariser must have summarise(texts, *, instruction)")
        self.summariser = summariser

    def normalise(self, text: str, *, types: Sequence[str]) -> Normalised:
        answer = self.summariser.summarise([text], instruction=_NORMALISE.format(types=", ".join(types)))
        m = re.search(r"\{.*\}", answer, re.DOTALL)
        try:
            got = Normalised.model_validate(json.loads(m.group(0) if m else answer))
        except ValueError as exc:  # JSONDecodeError and pydantic's ValidationError are ValueErrors
            raise SummariserError(f"the normaliser's answer is not the JSON asked for ({type(exc).__name__})") from None
        if got.type not in types:
            raise SummariserError(f"the normaliser chose an unknown type {got.type[:40]!r}")
        return got


class OpenAICompatibleSummariser:
    """Chat completions (``POST {base_url}/chat/completions``) of OpenAI, Ollama
    (``http://localhost:11434/v1``), vLLM or llama.cpp's server. ``api_key`` is sent as a bearer
    token and never appears in an error."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        timeout: float = 60.0,
        max_input_chars: int = 24_000,
        temperature: float = 0.0,
    ):
        if not isinstance(model, str) or not model.strip():
            raise InvalidInputError("model must be a non-empty string")
        if not isinstance(base_url, str) or not re.match(r"^https?://", base_url):
            raise InvalidInputError("base_url must be an http(s) URL")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._shown_url = safe_url(self.base_url)  # what messages say: no password, no key in the query
        self._api_key = api_key
        self.timeout = float(timeout)
        self.max_input_chars = int(max_input_chars)
        self.temperature = float(temperature)

    def __repr__(self) -> str:  # never the key
        return f"OpenAICompatibleSummariser(model={self.model!r}, base_url={self._shown_url!r})"

    def summarise(self, texts: Sequence[str], *, instruction: str) -> str:
        body_text, used = [], 0
        for k, t in enumerate(texts, start=1):
            piece = f"[{k}] {t}"
            if used + len(piece) > self.max_input_chars:
                break
            body_text.append(piece)
            used += len(piece) + 1
        payload = {
            "model": self.model,
            "temperature": self.temperature,
            "messages": [{"role": "system", "content": instruction}, {"role": "user", "content": "\n".join(body_text)}],
        }
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=json.dumps(payload).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                answer = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise SummariserError(f"chat request to {self._shown_url} failed: HTTP {exc.code}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SummariserError(f"chat request to {self._shown_url} failed: {type(reason).__name__}") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise SummariserError(f"{self._shown_url} answered something that is not JSON") from None
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise SummariserError(f"unexpected chat response from {self._shown_url}") from None
        if not isinstance(content, str) or not content.strip():
            raise SummariserError(f"{self._shown_url} answered an empty message")
        return content
