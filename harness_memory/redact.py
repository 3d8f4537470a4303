"""Secret redaction, applied before anything is hashed, embedded, indexed or stored.

Error logs are full of credentials and these memories are pasted into prompts. Two kinds of
rules find them:

- provider formats (GitHub, Slack, AWS, Stripe, PyPI, Shopify, ... tokens, PEM private keys,
  JWTs, webhook URLs): the whole match is a secret;
- context rules: ``key = value`` pairs whose key names a secret (``DB_PASSWORD=``,
  ``"client_secret": "..."``, ``\\"token\\": \\"...\\"``, ``AccountKey=...;``, ``apikey := "..."``),
  URL passwords, ``Authorization``/``Cookie`` headers, command-line flags
  (``--password VALUE``, ``mysql -pPASS``, ``curl -u user:pass``). These look at the key and
  at the value so that ``max_tokens=4096``, ``author=Jane``, ``token = lexer.next()`` or
  ``Basic authentication failed`` stay as they are.

Every rule collects spans on the original text; overlapping spans are merged and each is
replaced by ``[REDACTED:kind]``. A text in which no rule's literal occurs (most texts, nearly every
tag) is passed after three regex scans of literal tries, without running the rules (``_spans``; a
test checks that it finds exactly what every rule finds). Redaction is idempotent (a redacted text has nothing left
to find). Every pattern is linear-time: no repeated group (a group under ``*``, ``+`` or
``{m,n}``; only optional ``?`` groups), every repetition bounded, so hostile input cannot stall
a write (tests/test_redact.py compares the time at two input sizes). Measured against detect-secrets in docs/secrets.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["redact", "redact_text", "redact_mapping", "is_secret_key", "REDACTION_PATTERNS"]

MARK = "[REDACTED"
# a word boundary, or the end of a JSON/C escape such as \n (a secret on the next line of an
# escaped log message: "...\nghp_xxx")
B = r"(?:(?<=\\[nrt])|\b)"


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern.replace(r"\b", B, 1) if pattern.startswith(r"\b") else pattern, flags)


# -- provider formats: the whole match is the secret -------------------------------------------------
# (kind, literal hints: the pattern runs only when one occurs in the text, pattern)
REDACTION_PATTERNS: list[tuple[str, list[str] | None, re.Pattern[str]]] = [
    (
        "private_key",
        ["PRIVATE KEY"],
        _rx(
            r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
    ),
    ("anthropic_key", ["sk-ant-"], _rx(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai_key", ["sk-"], _rx(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("stripe_key", ["_live_", "_test_"], _rx(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("github_token", ["gh", "github_pat_"], _rx(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("gitlab_token", ["gl"], _rx(r"\bgl(?:pat|dt|ptt|rt|cbt|imt|oas|ft)-[A-Za-z0-9_-]{20,}")),
    ("slack_token", ["xox"], _rx(r"\bxox[abposrce]-[A-Za-z0-9-]{10,}")),
    (
        "slack_webhook",
        ["hooks.slack.com"],
        _rx(r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}"),
    ),
    ("discord_webhook", ["/api/webhooks/"], _rx(r"\bdiscord(?:app)?\.com/api/webhooks/[0-9]{5,25}/[A-Za-z0-9_-]{20,}")),
    (
        "aws_access_key",
        ["AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ABIA", "ACCA"],
        _rx(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ),
    ("google_api_key", ["AIza"], _rx(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("google_oauth", ["ya29.", "GOCSPX-"], _rx(r"\b(?:ya29\.[A-Za-z0-9_-]{20,}|GOCSPX-[A-Za-z0-9_-]{20,})")),
    ("huggingface_token", ["hf_"], _rx(r"\bhf_[A-Za-z0-9]{30,}")),
    ("npm_token", ["npm_"], _rx(r"\bnpm_[A-Za-z0-9]{36}")),
    ("pypi_token", ["pypi-"], _rx(r"\bpypi-[A-Za-z0-9_-]{40,}")),
    ("sendgrid_key", ["SG."], _rx(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}")),
    ("twilio_key", ["SK"], _rx(r"\bSK[0-9a-f]{32}\b")),
    ("shopify_token", ["shp"], _rx(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b")),
    ("telegram_token", [":AA"], _rx(r"(?<![0-9])[0-9]{6,12}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")),
    ("mailgun_key", ["key-"], _rx(r"\bkey-[0-9a-f]{32}\b")),
    ("mailchimp_key", ["-us"], _rx(r"\b[0-9a-f]{32}-us[0-9]{1,2}\b")),
    ("databricks_token", ["dapi"], _rx(r"\bdapi[0-9a-f]{32}(?:-[0-9])?\b")),
    ("vault_token", ["hvs.", "hvb.", "hvr."], _rx(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}")),
    ("doppler_token", ["dp."], _rx(r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}")),
    ("atlassian_token", ["ATATT3"], _rx(r"\bATATT3[A-Za-z0-9_=-]{100,}")),
    ("newrelic_key", ["NRAK-", "NRAI-"], _rx(r"\bNRA[KI]-[A-Z0-9]{27}\b")),
    ("linear_key", ["lin_api_"], _rx(r"\blin_api_[A-Za-z0-9]{40}\b")),
    ("digitalocean_token", ["_v1_"], _rx(r"\bdo[opr]_v1_[a-f0-9]{64}\b")),
    ("grafana_token", ["glc_", "glsa_"], _rx(r"\b(?:glc_[A-Za-z0-9+/=_-]{32,}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})")),
    ("postman_key", ["PMAK-"], _rx(r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b")),
    ("square_token", ["sq0", "EAAA"], _rx(r"\b(?:sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|EAAA[A-Za-z0-9_-]{60})")),
    ("age_secret_key", ["AGE-SECRET-KEY-1"], _rx(r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b")),
    ("jwt", ["eyJ"], _rx(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{0,1024}")),
]

# -- context rules ------------------------------------------------------------------------------------
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "passcode", "pwd", "pass", "pword", "pin"})
_TOKEN_WORDS = frozenset(
    {
        "secret",
        "secrets",
        "token",
        "apikey",
        "credential",
        "credentials",
        "auth",
        "authtoken",
        "accesstoken",
        "sig",
        "privatekey",
        "clientsecret",
        "secretkey",
        "accesskey",
        "sas",
        "sastoken",
        "jwt",
        "bearer",
        "cookie",
        "sessionid",
        "session_token",
        "webhook",
    }
)
_KEY_PREFIXES = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "client",
        "signing",
        "encryption",
        "master",
        "account",
        "storage",
        "app",
        "service",
        "shared",
        "subscription",
        "license",
        "webhook",
        "session",
        "auth",
        "consumer",
        "deploy",
        "ssh",
        "gpg",
        "pgp",
        "encrypt",
        "hmac",
        "jwt",
        "x",
        "admin",
        "root",
        "crypto",
        "sign",
        "cipher",
        "aes",
        "rsa",
        "instrumentation",
        "ingest",
        "management",
    }
)
# trailing key segments that do not change what the key holds (secret_key_base, token_value)
_NEUTRAL_TAILS = frozenset({"base", "value", "val", "str", "string", "b64", "base64", "hex", "enc", "raw", "plain"})
_TOKEN_ENDINGS = ("password", "passwd", "token", "secret", "apikey")
_PLACEHOLDERS = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "empty",
        "redacted",
        "hidden",
        "masked",
        "secret",
        "password",
        "token",
        "required",
        "optional",
        "missing",
        "invalid",
        "expired",
        "n/a",
        "na",
        "unset",
        "default",
        "changeme",
        "your_password",
        "your-password",
        "yourpassword",
        "your_token",
        "your_api_key",
        "xxx",
        "todo",
        "example",
        "string",
        "str",
        "bytes",
        "any",
        "int",
        "bool",
        "env",
        "self",
        "ok",
        "error",
        "failed",
        "valid",
    }
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEG = re.compile(r"[_.\-]+")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_MASKED = frozenset("*x•#.-_X")


def is_secret_key(key: str) -> str | None:
    """``"password"``, ``"token"`` or ``None``: whether a key name (``DB_PASSWORD``,
    ``clientSecret``, ``x-api-key``, ``AccountKey``) names a secret."""
    segs = [s for s in _SEG.split(_CAMEL.sub("_", key).lower()) if s]
    while len(segs) > 1 and segs[-1] in _NEUTRAL_TAILS:
        segs.pop()
    if not segs:
        return None
    last = segs[-1]
    if last in _PASSWORD_WORDS or last.endswith(("password", "passwd")):
        return "password"
    if last in _TOKEN_WORDS or last.endswith(_TOKEN_ENDINGS):
        return "token"
    if last == "key" and len(segs) >= 2 and (segs[-2] in _KEY_PREFIXES or segs[-2].endswith(("secret", "access"))):
        return "token"
    return None


def _plausible(value: str, cls: str, key: str, following: str) -> bool:
    """Whether ``value`` (given after a secret-naming key) looks like a credential rather than a
    placeholder, a number, a code expression, a path or an ordinary word."""
    v = value.strip()
    if not v or v.startswith(MARK):
        return False
    low = v.lower()
    if low in _PLACEHOLDERS or all(c in _MASKED for c in v):
        return False
    if v[0] in "$%<{" or v.startswith(("{{", "${", "#{")):
        return False  # a template variable: $DB_PASSWORD, %(pw)s, <your token>, {{ secrets.X }}
    if following and following[0] in "([":
        return False  # a call or an index: getpass.getpass(), os.environ["X"]
    if "." in v and all(part.isidentifier() and part.isascii() for part in v.split(".")):
        return False  # a dotted name: settings.OPENAI_API_KEY, self.token
    if v.startswith(("/", "~/", "./", "../")) and v.count("/") >= 2:
        return False  # a path
    if v.isdigit():
        return cls == "password" and key.lower().split("_")[-1] not in ("pass",) and len(v) >= 4
    if cls == "password":
        return len(v) >= 3
    if len(v) < 6:
        return False
    if v.isalpha() and (v.islower() or v.isupper() or v.istitle() or len(v) < 8):
        return False  # an ordinary word: oauth, Bearer, LDAP
    return True


Span = tuple[int, int, str]

_PAIR = re.compile(
    r"(?P<kw>password|passwd|passphrase|passcode|pwd|pass|secret|token|api[_-]?key|apikey|key|credentials?|auth"
    r"|sig|sas|cookie|sessionid)(?P<suf>[A-Za-z0-9_.-]{0,24})(?P<q>\\{0,4}[\"'])?"
    r"(?P<sep>[ \t]{0,3}(?::=|=>|[:=])[ \t]{0,3}|[ \t]{1,3}(?=\\{0,4}[\"']))"
    r"(?:\\{1,4}\"(?P<v1>[^\"\\\n]{1,512})|\"(?P<v2>[^\"\n]{1,512})|'(?P<v3>[^'\n]{1,512})"
    r"|(?P<v4>[^\s\"'\\,;&<>()\[\]{}`|]{1,512}))",
    re.I,
)
_PHRASE_WORD = re.compile(r"[ \t](?P<w>[^\s\"'\\,;&<>()\[\]{}`|:=]{1,64})")


def _key_before(text: str, start: int) -> str:
    i = start
    lo = max(0, start - 40)
    while i > lo and text[i - 1] in _KEY_CHARS:
        i -= 1
    return text[i:start]


_PAIR_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "credential", "auth", "sig", "sas", "cookie", "sessionid")


def _pairs(text: str, low: str) -> list[Span]:
    # Candidates are the keyword occurrences (str.find is fast); the pattern is matched there only.
    starts: set[int] = set()
    for kw in _PAIR_KEYWORDS:
        i = low.find(kw)
        while i >= 0:
            starts.add(i)
            i = low.find(kw, i + 1)
    out: list[Span] = []
    done = 0  # the end of the last accepted value: candidates inside it are skipped
    for at in sorted(starts):
        if at < done:
            continue
        m = _PAIR.match(text, at)
        if m is None:
            continue
        key = _key_before(text, m.start()) + m.group("kw") + m.group("suf")
        cls = is_secret_key(key)
        if cls is None:
            continue
        for g in ("v1", "v2", "v3", "v4"):
            if m.group(g) is not None:
                break
        value, vs, ve = m.group(g), m.start(g), m.end(g)
        if not _plausible(value, cls, key, text[ve : ve + 1]):
            continue
        if g == "v4" and cls == "password" and ":" in m.group("sep"):
            # an unquoted password after a colon runs to the end of the phrase:
            # "password: correct horse battery staple"
            for _ in range(8):
                w = _PHRASE_WORD.match(text, ve)
                if w is None:
                    break
                ve = w.end()
        if g == "v4":
            while ve > vs and text[ve - 1] in ".":
                ve -= 1  # the full stop of a sentence
        out.append((vs, ve, "secret_pair"))
        done = ve
    return out


_SCHEME_TOKEN = re.compile(
    r"\b(?P<kw>[Bb]earer|BEARER|[Tt]oken|TOKEN|[Bb]asic|BASIC|[Dd]igest|Bot|OAuth|SSWS)"
    r"[ \t]{1,3}(?P<v>[A-Za-z0-9._~+/=-]{12,4096})"
)


_SCHEME_HINTS = ("bearer", "token", "basic", "digest", "bot ", "oauth", "ssws")


def _schemes(text: str, low: str) -> list[Span]:
    out: list[Span] = []
    if not any(h in low for h in _SCHEME_HINTS):
        return out
    for m in _SCHEME_TOKEN.finditer(text):
        v = m.group("v")
        if v.startswith(MARK):
            continue
        has_digit = any(c.isdigit() for c in v)
        mixed = any(c.islower() for c in v) and any(c.isupper() for c in v)
        if has_digit or (mixed and len(v) >= 16 and not v.istitle()) or v.endswith("="):
            out.append((m.start("v"), m.end("v"), "bearer"))
    return out


_URL_PASSWORD = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://(?P<user>[^\s/?#@:]{0,256}):(?P<v>[^\s/]{1,512})@")


_URL_HINT = "://"


def _url_passwords(text: str, low: str) -> list[Span]:
    if _URL_HINT not in text:
        return []
    return [
        (m.start("v"), m.end("v"), "url_password")
        for m in _URL_PASSWORD.finditer(text)
        # a userinfo that is already a marker (a token redacted before: ``https://[REDACTED:github_token]@``)
        # is not a user:password pair; read as one, redacting twice nested the markers
        if not m.group("v").startswith(MARK) and not m.group("user").startswith(MARK)
    ]


_COOKIE = re.compile(r"\b(?:[Ss]et-)?[Cc]ookie[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?(?P<v>[^\n\r\"']{1,4096})")


_COOKIE_HINT = "cookie"


def _cookies(text: str, low: str) -> list[Span]:
    out: list[Span] = []
    if _COOKIE_HINT not in low:
        return out
    for m in _COOKIE.finditer(text):
        v = m.group("v").rstrip()
        if v.startswith(MARK) or "=" not in v:
            continue
        out.append((m.start("v"), m.start("v") + len(v), "cookie"))
    return out


# (kind, lower-case hints, pattern)
_FLAG_RULES: list[tuple[str, tuple[str, ...], re.Pattern[str]]] = [
    # --password VALUE, --password=VALUE, --client-secret VALUE
    (
        "cli_password",
        ("pass", "secret", "token", "key"),
        re.compile(
            r"-(?<![\w-]-)-?(?:db-|admin-|root-|client-|api-|access-|auth-|bot-)?(?:password|passwd|pass|secret|token|"
            r"api-key|apikey|access-key|secret-key|auth-token|access-token)(?:=|[ \t]{1,3})(?!-)"
            r"(?:\"(?P<v2>[^\"\n]{1,512})\"|'(?P<v3>[^'\n]{1,512})'|(?P<v>[^\s\"']{1,512}))"
        ),
    ),
    # mysql -pPASSWORD (no space: with a space mysql prompts)
    (
        "cli_password",
        ("mysql", "mariadb"),
        re.compile(
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump|mysqlsh)\b[^\n]{0,300}?[ \t]-p"
            r"(?:\"(?P<v2>[^\"\n]{1,512})\"|'(?P<v3>[^'\n]{1,512})'|(?P<v>[^\s\"']{1,512}))"
        ),
    ),
    # sshpass -p VALUE
    ("cli_password", ("sshpass",), re.compile(r"\bsshpass[ \t]{1,3}-p[ \t]{0,3}(?P<v>[^\s\"']{1,512})")),
    # curl -u user:password
    (
        "cli_password",
        ("curl", "wget", "http"),
        re.compile(
            r"\b(?:curl|wget|http)\b[^\n]{0,300}?[ \t](?:-u|--user|--http-user)[ \t=]{1,3}[^\s:\"']{1,128}:(?P<v>[^\s\"']{1,512})"
        ),
    ),
    # .netrc: machine HOST login USER password PASSWORD (or default login ...): any password after an entry's
    # head; without one ("a login form; password reset"), only a value that looks made, not a word
    (
        "netrc_password",
        ("login",),
        re.compile(
            r"(?:\bmachine[ \t]{1,3}\S{1,253}|\bdefault)[ \t]{1,3}login[ \t]{1,3}\S{1,128}[ \t]{1,3}password[ \t]{1,3}"
            r"(?P<v>\S{1,512})"
        ),
    ),
    (
        "netrc_password",
        ("login",),
        re.compile(
            r"\blogin[ \t]{1,3}[^\s;,]{1,128}[ \t]{1,3}password[ \t]{1,3}(?P<v>(?=\S*(?:\d|[^\w\s]\S))\S{1,512})"
        ),
    ),
    # SQL: IDENTIFIED BY 'password'
    (
        "sql_password",
        ("identified",),
        re.compile(
            r"\b(?i:identified)[ \t]{1,3}(?i:by)[ \t]{1,3}(?:PASSWORD[ \t]{0,3})?['\"](?P<v>[^'\"\n]{1,512})['\"]"
        ),
    ),
]


def _flags(text: str, low: str) -> list[Span]:
    out = []
    for kind, hints, rx in _FLAG_RULES:
        if not any(h in low for h in hints):
            continue
        for m in rx.finditer(text):
            g = next((g for g in ("v", "v2", "v3") if g in rx.groupindex and m.group(g) is not None), None)
            if g is None:
                continue
            value = m.group(g)
            if value.startswith(MARK) or value.startswith("$") or (g == "v" and len(value) < 4):
                continue
            out.append((m.start(g), m.end(g), kind))
    return out


_DISCORD_TAIL = re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])")
_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _discord(text: str, low: str) -> list[Span]:
    """Discord bot tokens: base64(user id) . 6 chars . 27-40 chars. Found from the dotted tail
    (a literal to scan for), then the id part is checked backwards."""
    out = []
    for m in _DISCORD_TAIL.finditer(text):
        i = m.start()
        lo = max(0, i - 29)
        while i > lo and text[i - 1] in _TOKEN_CHARS:
            i -= 1
        n = m.start() - i
        if 24 <= n <= 28 and text[i] in "MNO" and (i == 0 or text[i - 1] not in _TOKEN_CHARS):
            out.append((i, m.end(), "discord_token"))
    return out


_ALL_HINTS = tuple(sorted({h for _, hints, _ in REDACTION_PATTERNS for h in hints or ()}))
_HINT_SETS = [(kind, None if hints is None else frozenset(hints), rx) for kind, hints, rx in REDACTION_PATTERNS]


def _formats(text: str, low: str) -> list[Span]:
    present = {h for h in _ALL_HINTS if h in text}  # one pass over the literals, not one per pattern
    return [
        (m.start(), m.end(), kind)
        for kind, hints, rx in _HINT_SETS
        if hints is None or not hints.isdisjoint(present)
        for m in rx.finditer(text)
    ]


_RULES: list[Callable[[str, str], list[Span]]] = [
    _formats,
    _discord,
    _url_passwords,
    _schemes,
    _cookies,
    _flags,
    _pairs,
]


def _literal_trie(literals: Sequence[str]) -> str:
    """A regex matching exactly where one of ``literals`` occurs, written as a trie (``b(?:asic|earer)``):
    Python's ``re`` tries an alternation's branches one by one, so a flat one of 70 literals costs
    several times the trie."""
    root: dict = {}
    for w in literals:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        if "" in node:  # a literal ends here: a longer one through it adds nothing
            return ""
        alts = [re.escape(ch) + emit(node[ch]) for ch in sorted(node)]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(root)


# The gate: literals without which no rule can find anything. A text in which none occurs holds
# nothing to redact, found by three regex scans instead of each rule's own tests (most texts, and
# nearly every tag): the format rules need one of their hints (case-sensitive, as _formats tests
# them), a Discord token its dotted tail, the context rules one of their lower-case hints in ``low``.
_FORMAT_GATE = re.compile(_literal_trie(_ALL_HINTS))
_DISCORD_GATE = re.compile(r"\.[A-Za-z0-9_-]{6}\.")  # the start of _DISCORD_TAIL
_CONTEXT_HINTS = tuple(
    sorted(
        {*_PAIR_KEYWORDS, *_SCHEME_HINTS, _COOKIE_HINT, _URL_HINT, *(h for _, hints, _ in _FLAG_RULES for h in hints)}
    )
)
_CONTEXT_GATE = re.compile(_literal_trie(_CONTEXT_HINTS))
_FORMAT_RULES: list[Callable[[str, str], list[Span]]] = [_formats, _discord]
_CONTEXT_RULES: list[Callable[[str, str], list[Span]]] = [_url_passwords, _schemes, _cookies, _flags, _pairs]


def _lower(text: str) -> str:
    """``text`` in lower case, of the same length (a character whose lower case is longer stays)."""
    low = text.lower()
    if len(low) != len(text):
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low


def _spans(text: str) -> list[Span]:
    low = _lower(text)
    fmt = _FORMAT_GATE.search(text) is not None or _DISCORD_GATE.search(text) is not None
    ctx = _CONTEXT_GATE.search(low) is not None
    if not (fmt or ctx):
        return []
    return _collect(text, low, (_FORMAT_RULES if fmt else []) + (_CONTEXT_RULES if ctx else []))


def _spans_all(text: str) -> list[Span]:
    """The spans of every rule, without the gate (the reference the gated path is tested against)."""
    return _collect(text, _lower(text), _RULES)


def _collect(text: str, low: str, rules: list[Callable[[str, str], list[Span]]]) -> list[Span]:
    spans: list[Span] = []
    for rule in rules:
        spans.extend(rule(text, low))
    if not spans:
        return []
    spans.sort(key=lambda s: (s[0], -s[1]))
    merged: list[list] = []
    for s, e, k in spans:
        if merged and s < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e, k])
    return [(s, e, k) for s, e, k in merged]


# Short texts (tags, metadata values, names) recur from memory to memory: their redaction is kept,
# keyed by the text (the rules are fixed at import, so it is a function of the text alone). Bounded;
# emptied when full (read with .get, so a thread that finds it emptied computes the answer again).
_SHORT_MAX = 64
_SHORT_CACHE_MAX = 8192
_short: dict[str, tuple[str, tuple[str, ...]]] = {}


def redact(text: str) -> tuple[str, list[str]]:
    """Return ``(redacted_text, kinds_found)``; each secret becomes ``[REDACTED:kind]``."""
    if not isinstance(text, str) or not text:
        return text, []
    if len(text) <= _SHORT_MAX and type(text) is str:  # (a subclass's answer is its own object)
        got = _short.get(text)
        if got is None:
            out, kinds = _redact(text)
            if kinds:  # a text holding a secret is not kept as a key: the secret would outlive the call
                return out, kinds
            if len(_short) >= _SHORT_CACHE_MAX:
                _short.clear()
            _short[text] = got = (out, ())
        return got[0], list(got[1])
    return _redact(text)


def _redact(text: str) -> tuple[str, list[str]]:
    spans = _spans(text)
    if not spans:
        return text, []
    parts, kinds, at = [], [], 0
    for s, e, k in spans:
        parts.append(text[at:s])
        parts.append(f"[REDACTED:{k}]")
        kinds.append(k)
        at = e
    parts.append(text[at:])
    return "".join(parts), list(dict.fromkeys(kinds))


def redact_text(text: str) -> str:
    """The redacted text alone (for notes, outcomes, templates: every path that stores text)."""
    return redact(text)[0]


def redact_mapping(obj, found: list[str] | None = None):
    """Redact every string in a JSON-like structure; a string under a key that names a secret
    (``{"password": "hunter2"}``) is replaced whole. Returns the new structure; the kinds
    found are appended to ``found``. Iterative (no recursion limit to hit)."""
    found = [] if found is None else found

    def one(value, key):
        if isinstance(value, str):
            if key is not None and (cls := is_secret_key(key)) and _plausible(value, cls, key, ""):
                found.append("secret_pair")
                return "[REDACTED:secret_pair]"
            out, kinds = redact(value)
            found.extend(kinds)
            return out
        return value

    if not isinstance(obj, (dict, list)):
        return one(obj, None)
    if not obj:  # (a memory's metadata, mostly) a new empty one, as the walk below makes
        return {} if isinstance(obj, dict) else []
    root: list = [None]
    stack: list[tuple[Any, dict | list, Any]] = [(obj, root, 0)]
    while stack:
        src, parent, slot = stack.pop()
        if isinstance(src, dict):
            dst: dict | list = {}
            parent[slot] = dst
            for k, x in src.items():
                if isinstance(x, (dict, list)):
                    dst[k] = None
                    stack.append((x, dst, k))
                else:
                    dst[k] = one(x, k if isinstance(k, str) else None)
        else:
            dst = [None] * len(src)
            parent[slot] = dst
            for i, x in enumerate(src):
                if isinstance(x, (dict, list)):
                    stack.append((x, dst, i))
                else:
                    dst[i] = one(x, None)
    return root[0]
