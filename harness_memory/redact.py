"""Secret redaction, applied before anything is hashed, embedded, indexed or stored.

Error logs are full of credentials and these memories are pasted into prompts. Every
pattern is linear-time (no nested quantifiers) so hostile input cannot stall a write.
"""

from __future__ import annotations

import re

__all__ = ["redact", "REDACTION_PATTERNS"]

# (kind, pattern, replacement). Group "keep" (when present) survives the redaction.
REDACTION_PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    ("private_key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.S), "[REDACTED:private_key]"),
    ("url_password", re.compile(r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@]{1,256}:)[^\s@/]{1,256}(?=@)"),
     r"\g<keep>[REDACTED:password]"),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), "[REDACTED:anthropic_key]"),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), "[REDACTED:openai_key]"),
    ("stripe_key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), "[REDACTED:stripe_key]"),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), "[REDACTED:github_token]"),
    ("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), "[REDACTED:gitlab_token]"),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "[REDACTED:slack_token]"),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b"), "[REDACTED:aws_access_key]"),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), "[REDACTED:google_api_key]"),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), "[REDACTED:huggingface_token]"),
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}"), "[REDACTED:npm_token]"),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "[REDACTED:jwt]"),
    ("bearer", re.compile(r"(?P<keep>\b(?:[Bb]earer|[Tt]oken|[Bb]asic)\s+)[A-Za-z0-9._~+/=-]{12,}"),
     r"\g<keep>[REDACTED:token]"),
    ("secret_pair", re.compile(
        r"(?P<keep>\b[A-Za-z0-9_.-]{0,40}(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
        r"auth|credential|private[_-]?key)[A-Za-z0-9_.-]{0,40}[\"']?\s{0,3}[:=]\s{0,3}[\"']?)"
        r"(?!\[REDACTED)[^\s\"',;&]{1,512}", re.I), r"\g<keep>[REDACTED:secret]"),
]


def redact(text: str) -> tuple[str, list[str]]:
    """Return ``(redacted_text, kinds_found)``."""
    found: list[str] = []
    for kind, pattern, repl in REDACTION_PATTERNS:
        text, n = pattern.subn(repl, text)
        if n:
            found.append(kind)
    return text, found
