"""Error signatures: cut the failure out of raw error text, mask its variable parts, and
sign it with an online template miner whose state lives in the database.

The miner works like the log-template miners (Drain): a masked message is compared with
the templates already seen in its partition (same token count, same first token, same key
stack frame); it joins the most similar one (generalising differing positions to ``<*>``)
or starts a new template. A signature id is issued when a template is created and names
that group for good, whatever it later generalises to; when a template generalises so far
that it subsumes another one of its partition, the other is linked to it
(``error_signature_links``), never renamed, and recall by either id finds both.

One configuration for every source: positions match when equal or already a wildcard,
tokens holding a digit are variables, and the similarity threshold is 0.7 (chosen on
loghub-2k, see docs/signatures.md).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:  # pragma: no cover
    from .sqlite_backend import SQLiteBackend

__all__ = ["ErrorSignature", "Excerpt", "extract", "mask_params", "tokenize", "categorize", "TemplateMiner",
           "CATEGORIES", "WILDCARD"]

WILDCARD = "<*>"
CATEGORIES = ("compile_error", "type_error", "import_error", "test_failure", "assertion", "timeout", "network",
              "rate_limit", "out_of_memory", "context_overflow", "permission", "not_found", "unknown")


class ErrorSignature(BaseModel):
    """The signature of one error text."""

    id: str = Field(description="short stable id, e.g. err_3f2a9c1d0b7e4a55")
    template: str = Field(description="the message with its variable parts masked as <*>")
    category: str
    params: list[str] = Field(default_factory=list, description="the values that were masked, in order")
    exception: str | None = Field(None, description="exception type, when the text names one")
    frame: str | None = Field(None, description="the application stack frame the signature keys on")
    excerpt: str = Field(description="the failure excerpt cut from the input")


# -- masking ------------------------------------------------------------------------------------
# Bounded, linear patterns only (no nested quantifiers): they run on untrusted text.
_MASKS: list[re.Pattern[str]] = [
    re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),  # uuid
    re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://[^\s'\"<>]{1,2000}"),  # url
    re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?"),  # timestamp
    re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b"),  # ipv4[:port]
    re.compile(r"\b0x[0-9a-fA-F]{1,32}\b"),  # hex / memory address
    re.compile(r"\b[0-9a-fA-F]{12,128}\b"),  # hashes
    re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.@+~-]{1,255}){2,64}[\\/]?(?::\d{1,7}){0,2}"),  # paths[:line[:col]]
    re.compile(r"\"[^\"\n]{0,400}\"|'[^'\n]{0,400}'|`[^`\n]{0,400}`"),  # quoted values
    re.compile(r"(?<![A-Za-z_])[-+]?\d{1,40}(?:\.\d{1,40})?(?:[eE][-+]?\d{1,4})?"),  # numbers
]


_EXC_NAME = re.compile(r"(?:Error|Exception|Exit|Interrupt|Warning|Failure|Throwable|Fault)[\w$]{0,40}$")


def mask_params(text: str) -> tuple[str, list[str]]:
    """``(masked, params)``: every variable part replaced by ``<*>``; idempotent."""
    params: list[str] = []

    def sub(m: re.Match[str]) -> str:
        params.append(m.group(0))
        return WILDCARD

    for pattern in _MASKS:
        text = pattern.sub(sub, text)
    return " ".join(text.split()), params


_QUALIFIED_NAME = re.compile(r"^[A-Za-z_][\w$]{0,200}(?:\.[A-Za-z_][\w$]{0,200}){0,30}:?$")


def tokenize(masked: str) -> list[str]:
    """Whitespace tokens; a token holding a digit is a variable, except an exception name
    (``sqlite3.OperationalError:``, ``Http2Exception``). A token with a masked part keeps its
    literal rest (``uid=<*>``)."""
    out = []
    for t in masked.split():
        if t != WILDCARD and any(ch.isdigit() for ch in t) and not (
                _QUALIFIED_NAME.match(t) and _EXC_NAME.search(t.rstrip(":"))):
            t = WILDCARD
        out.append(t)
    return out


# -- excerpt ------------------------------------------------------------------------------------
_PY_FRAME = re.compile(r'^\s*File "([^"]{1,1000})", line (\d{1,9}), in (\S{1,300})')
_EXC = re.compile(r"^(?:Exception in thread \"[^\"]{0,200}\" )?(?:Caused by: )?(?:[A-Z]\s{1,8})?"
                  r"([A-Za-z_][\w$]{0,200}(?:\.[A-Za-z_][\w$]{0,200}){0,30})(?::\s?(.{0,4000}))?$")
_JAVA_FRAME = re.compile(r"^\s*at ([\w$.<>/-]{1,500})\(([^)]{0,300})\)")
_LIB_PY = re.compile(r"site-packages|dist-packages|[\\/]lib[\\/]python\d|<frozen|[\\/]_pytest[\\/]|[\\/]pluggy[\\/]|"
                     r"[\\/]unittest[\\/]|<string>")
_LIB_JAVA = re.compile(r"^(?:java|javax|jdk|sun|com\.sun|junit|org\.junit|org\.apache\.tools\.ant|org\.hamcrest|"
                       r"org\.easymock|org\.mockito|org\.gradle|org\.apache\.maven|kotlin|scala|groovy|"
                       r"org\.codehaus\.groovy|net\.bytebuddy|worker\.org\.gradle)\.")
_TESTISH = re.compile(r"(?:^|[.$/\\])(?:Test\w*|\w*Tests?|\w*TestCase|test_\w+|\w+_test)(?:[.$(]|$)|\.tests?\.")
_ERRORISH = re.compile(r"(?i)\b(?:error|errors|fatal|failed|failure|exception|panic|traceback|timed out|timeout|"
                       r"denied|refused|not found|cannot|can't|unable|killed|abort(?:ed)?)\b|npm ERR!|^E\s{2,}")


@dataclass
class Excerpt:
    message: str
    exception: str | None = None
    frame: str | None = None
    frames: list[str] = field(default_factory=list)


def _java(lines: list[str]) -> Excerpt | None:
    # the root cause: the last exception header that has frames under it
    headers = [i for i, ln in enumerate(lines) if _EXC.match(ln.strip()) and _EXC_NAME.search(
        _EXC.match(ln.strip()).group(1)) and i + 1 < len(lines) and _JAVA_FRAME.match(lines[i + 1])]
    if not headers:
        return None
    start = headers[-1]
    m = _EXC.match(lines[start].strip())
    frames = []
    for ln in lines[start + 1:]:
        fm = _JAVA_FRAME.match(ln)
        if not fm:
            if ln.strip().startswith("..."):
                continue
            break
        frames.append(fm.group(1))
    app = [f for f in frames if not _LIB_JAVA.match(f)]
    # the first application frame outside the tests; failing inside a test only: the test class
    key = next((f for f in app if not _TESTISH.search(f)), None)
    if key is None and app:
        key = app[0].rsplit(".", 1)[0]
    exc = m.group(1)
    return Excerpt(message=f"{exc}: {m.group(2) or ''}".strip(), exception=exc.rsplit(".", 1)[-1], frame=key,
                   frames=app)


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path)[-1]


def _python(lines: list[str]) -> Excerpt | None:
    starts = [i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent call last)")]
    if not starts:
        return None
    block = lines[starts[-1] + 1:]
    frames, exc_line = [], None
    for ln in block:
        fm = _PY_FRAME.match(ln)
        if fm:
            frames.append((fm.group(1), fm.group(3)))
        elif not ln.startswith((" ", "\t")) and ln.strip():
            exc_line = ln.strip()
            break
    if exc_line is None:
        return None
    app = [f"{_basename(path)}:{func}" for path, func in frames if not _LIB_PY.search(path)]
    m = _EXC.match(exc_line)
    exc = m.group(1).rsplit(".", 1)[-1] if m and _EXC_NAME.search(m.group(1)) else None
    key = next((f for f in reversed(app) if not _TESTISH.search(f.split(":")[0])), None)
    if key is None and app:
        key = app[-1].split(":")[0]  # failing inside a test only: the test file
    return Excerpt(message=exc_line, exception=exc, frame=key, frames=app)


def extract(text: str, *, max_chars: int = 2000) -> Excerpt:
    """The failure excerpt of raw error text: a traceback's (root) exception, else the first
    error-looking line of a log, else its first line."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n") if ln.strip()][:20000]
    if not lines:
        return Excerpt(message="")
    ex = _python(lines) or _java(lines)
    if ex is None:
        line = next((ln.strip() for ln in lines if _ERRORISH.search(ln) and not _PY_FRAME.match(ln)
                     and not _JAVA_FRAME.match(ln)), lines[0].strip())
        line = re.sub(r"^E\s{2,}", "", line)
        m = _EXC.match(line)
        exc = m.group(1).rsplit(".", 1)[-1] if m and _EXC_NAME.search(m.group(1)) and m.group(2) is not None else None
        ex = Excerpt(message=line, exception=exc)
    ex.message = ex.message[:max_chars]
    return ex


# -- category -----------------------------------------------------------------------------------
_BY_EXCEPTION = [
    ("import_error", re.compile(r"^(?:ImportError|ModuleNotFoundError|ClassNotFoundException|NoClassDefFoundError|"
                                r"LinkageError|UnsatisfiedLinkError)$")),
    ("type_error", re.compile(r"^(?:TypeError|ClassCastException|InvalidCastException)$")),
    ("compile_error", re.compile(r"^(?:SyntaxError|IndentationError|TabError|CompileError|CompilationError)$")),
    ("assertion", re.compile(r"^(?:AssertionError|AssertionFailedError|ComparisonFailure|AssertionFailure|"
                             r"MultipleFailuresError)$")),
    ("timeout", re.compile(r"Timeout|TimedOut")),
    ("out_of_memory", re.compile(r"^(?:MemoryError|OutOfMemoryError)$")),
    ("permission", re.compile(r"^(?:PermissionError|AccessDeniedException|SecurityException|AccessControlException)$")),
    ("not_found", re.compile(r"^(?:FileNotFoundError|FileNotFoundException|NoSuchFileException|KeyError|"
                             r"NoSuchElementException|NoSuchMethodError|NoSuchFieldError)$")),
    ("network", re.compile(r"Connection|Socket|UnknownHost|SSL|Network|HTTPError|URLError|ProtocolError")),
]
_BY_TEXT = [
    ("context_overflow", re.compile(r"(?i)context (?:length|window|limit)|maximum context|too many tokens|"
                                    r"token limit|prompt is too long")),
    ("rate_limit", re.compile(r"(?i)rate.?limit|too many requests|\b429\b|quota exceeded|throttl")),
    ("out_of_memory", re.compile(r"(?i)out of memory|\bOOM|cannot allocate memory|heap space|memory limit")),
    ("timeout", re.compile(r"(?i)timed? ?out|timeout|deadline exceeded")),
    ("permission", re.compile(r"(?i)permission denied|access denied|\bEACCES\b|forbidden|\b40[13]\b|unauthori[sz]ed|"
                              r"not permitted")),
    ("import_error", re.compile(r"(?i)no module named|cannot find module|unresolved import|could not resolve|"
                                r"cannot import name|package .{1,100} does not exist")),
    ("type_error", re.compile(r"(?i)incompatible types?|mismatched types|type mismatch|is not assignable|"
                              r"\berror TS\d+|has no attribute|not callable|expected type")),
    ("compile_error", re.compile(r"(?i)syntax ?error|compil(?:e|ation|er)|error\[E\d+\]|cannot find symbol|"
                                 r"undefined reference|unexpected token|build failed")),
    ("network", re.compile(r"(?i)connection (?:refused|reset|aborted|closed)|\bECONN\w+|network is unreachable|"
                           r"name or service not known|getaddrinfo|temporary failure in name resolution|"
                           r"broken pipe|ssl|tls handshake|\b50[234]\b")),
    ("not_found", re.compile(r"(?i)not found|no such file|\bENOENT\b|does not exist|\b404\b|missing")),
    ("assertion", re.compile(r"(?i)assert|expected .{0,200}(?:but|got|was|actual)")),
    ("test_failure", re.compile(r"(?i)\bFAILED\b|\bFAIL:|tests? failed|failures?=|test failure")),
]


def categorize(excerpt: Excerpt) -> str:
    if excerpt.exception:
        for cat, rx in _BY_EXCEPTION:
            if rx.search(excerpt.exception):
                return cat
    for cat, rx in _BY_TEXT:
        if rx.search(excerpt.message):
            return cat
    return "unknown"


# -- the miner ----------------------------------------------------------------------------------
class TemplateMiner:
    """Online template mining with its state in ``error_templates`` (see module docstring)."""

    def __init__(self, backend: "SQLiteBackend", clock, *, threshold: float = 0.7):
        self.backend = backend
        self.clock = clock
        self.threshold = threshold
        self._cache: dict[str, list[tuple[str, list[str]]]] = {}
        self._rev = -1

    @staticmethod
    def partition(tokens: list[str], frame: str | None) -> str:
        first = tokens[0] if tokens else ""
        return f"{len(tokens)}|{first}|{frame or ''}"

    def _refresh(self) -> None:
        rev = self.backend.execute("SELECT COALESCE(MAX(rev), 0) FROM error_templates").fetchone()[0]
        if rev != self._rev:
            self._cache.clear()
            self._rev = rev

    def _clusters(self, part: str) -> list[tuple[str, list[str]]]:
        got = self._cache.get(part)
        if got is None:
            got = [(r[0], json.loads(r[1])) for r in self.backend.execute(
                "SELECT sig, tokens FROM error_templates WHERE partition = ? ORDER BY id", (part,))]
            self._cache[part] = got
        return got

    def _best(self, clusters, tokens: list[str]) -> tuple[str, list[str]] | None:
        best, best_key = None, (-1.0, -1)
        n = max(1, len(tokens))
        for sig, tpl in clusters:
            eq = wild = 0
            for a, b in zip(tpl, tokens):
                if a == WILDCARD:
                    wild += 1
                elif a == b:
                    eq += 1
            key = ((eq + wild) / n, eq)
            if key > best_key:
                best, best_key = (sig, tpl), key
        return best if best is not None and best_key[0] >= self.threshold else None

    @staticmethod
    def _merge(tpl: list[str], tokens: list[str]) -> list[str]:
        return [a if a == b else WILDCARD for a, b in zip(tpl, tokens)]

    def sign(self, tokens: list[str], frame: str | None, category: str, exception: str | None) -> tuple[str, list[str]]:
        """``(signature_id, template_tokens)`` for a masked, tokenised message."""
        part = self.partition(tokens, frame)
        self._refresh()
        best = self._best(self._clusters(part), tokens)
        if best is not None and self._merge(best[1], tokens) == best[1]:
            return best
        with self.backend.write() as c:  # create or generalise, serialised across processes
            self._rev = -1
            self._refresh()
            clusters = self._clusters(part)
            best = self._best(clusters, tokens)
            now = float(self.clock())
            rev = self._rev + 1
            if best is not None:
                sig, merged = best[0], self._merge(best[1], tokens)
                if merged == best[1]:
                    return best
                c.execute("UPDATE error_templates SET tokens = ?, rev = ?, updated_at = ?, seen = seen + 1 "
                          "WHERE sig = ?", (json.dumps(merged), rev, now, sig))
                for other, tpl in clusters:  # a template this one now subsumes is the same group: link it
                    if other != sig and all(a == WILDCARD or a == b for a, b in zip(merged, tpl)):
                        c.execute("DELETE FROM error_templates WHERE sig = ?", (other,))
                        c.execute("UPDATE error_signature_links SET canonical = ? WHERE canonical = ?", (sig, other))
                        c.execute("INSERT OR REPLACE INTO error_signature_links(sig, canonical, linked_at) "
                                  "VALUES (?, ?, ?)", (other, sig, now))
            else:
                merged = list(tokens)
                base = hashlib.sha256(f"{part}\x00{' '.join(tokens)}".encode()).hexdigest()
                sig, k = f"err_{base[:16]}", 0
                while c.execute("SELECT 1 FROM error_templates WHERE sig = ? UNION ALL "
                                "SELECT 1 FROM error_signature_links WHERE sig = ?", (sig, sig)).fetchone():
                    k += 1
                    sig = f"err_{hashlib.sha256(f'{base}{k}'.encode()).hexdigest()[:16]}"
                c.execute("INSERT INTO error_templates(sig, partition, tokens, category, exception, rev, created_at, "
                          "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          (sig, part, json.dumps(merged), category, exception, rev, now, now))
            self._cache.clear()
            self._rev = rev
            return sig, merged

    def aliases(self, sig: str) -> list[str]:
        """``sig`` and every signature linked to it."""
        return [sig] + [r[0] for r in self.backend.execute(
            "SELECT sig FROM error_signature_links WHERE canonical = ?", (sig,))]

    def canonical(self, sig: str) -> str:
        r = self.backend.execute("SELECT canonical FROM error_signature_links WHERE sig = ?", (sig,)).fetchone()
        return r[0] if r else sig
