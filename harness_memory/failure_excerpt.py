"""Find the decisive failure in raw error text: a message, a traceback, or a whole CI log.

The method, in order (docs/signatures.md has the long form):

1. **A bounded window.** Only the last ``WINDOW_CHARS`` characters are read line by line, and
   of them at most the last ``WINDOW_LINES`` lines
   (a failing build stops at its failure, so the failure is near the end). When that window
   holds no failure statement at all, a second window is cut around the last strong failure
   marker of the earlier text. Cost: one C-speed newline count over the whole input, then
   work proportional to the window; memory bounded by the window.
2. **Clean every line** without changing line numbers (only ``\\n`` ends a line): a ``\\r``
   overwrite keeps what a terminal shows (the last non-empty segment); ANSI escapes and
   control characters go; CI prefixes go (ISO timestamps, ``job<TAB>step<TAB>`` columns of
   GitHub's CLI logs, ``[HH:MM:SS]`` stamps, ``##[group]``/``##[error]`` annotations and
   ``::error::`` commands); level tags (``[ERROR]``, ``ERROR:``) are removed from the text and
   kept as evidence.
3. **Classify each line** by what it states, structurally, never by a bare keyword:
   an exception or panic (5), a compiler or checker diagnostic at a source location (4), a
   failing test or a tool's own error statement (3), a weaker line that only uses failure
   words (2), a generic trailer such as ``make: *** Error 1``, ``exit code 1``,
   ``BUILD FAILURE`` (1). Command echoes (``+ cmd``, ``$ cmd``, ``> git …``,
   ``##[group]Run …``), lines that state success or zero errors, and configuration words
   (``timeout=10``, ``-Werror``, ``errorprone``) are not failures; echoes and step headers
   mark step boundaries.
4. **The failing step** is the step (between boundaries) holding the last specific failure
   line; in it, the most specific class wins and, within a class, the first line (the first
   compiler error, the first failing test), except tracebacks, where the root cause wins
   (the last Python traceback, the last ``Caused by:`` of a Java trace).
5. **The excerpt** is a bounded block: the decisive line with its few lines of detail, with
   its 1-based line span in the input.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .failure_lexicon_tables import RUNTIME_REPORTS
from .regex_prefilter import Prefiltered, literal_set_pattern

__all__ = ["Baseline", "Excerpt", "Line", "WINDOW_CHARS", "WINDOW_LINES", "clean_lines", "extract"]

WINDOW_CHARS = 2_000_000  # the tail read line by line; documented in docs/signatures.md
WINDOW_LINES = 100_000  # and at most this many of its lines: a log of very short lines (progress dots) stays fast


def _window_start(text: str) -> int:
    """Where the window starts: the last ``WINDOW_CHARS`` characters, cut at a line start, and of
    those at most the last ``WINDOW_LINES`` lines (the cost is per line: 2,000,000 characters of
    two-character lines are a million lines, which took 5.8 s to read)."""
    n = len(text)
    start = text.rfind("\n", 0, n - WINDOW_CHARS) + 1 if n > WINDOW_CHARS else 0
    if text.count("\n", start) > WINDOW_LINES:
        start += len(text[start:].rsplit("\n", WINDOW_LINES)[0]) + 1
    return start


MAX_BLOCK_LINES = 8
MAX_BLOCK_CHARS = 2000
_MAX_MESSAGE_LINES = 400  # lines an exception's message may take before its first stack frame


@dataclass
class Excerpt:
    message: str
    detail: str = ""  # the decisive line's wider detail (categorising only, never shown)
    exception: str | None = None
    frame: str | None = None
    frames: list[str] = field(default_factory=list)
    block: str = ""
    lines: tuple[int, int] | None = None
    kind: str = "message"
    level: str | None = None
    causes: list[str] = field(default_factory=list)  # what the failure reports as its cause (categorising only)
    retries: list[str] = field(default_factory=list)  # retries reported just before it (categorising only)
    command: str | None = None  # the echoed command whose output holds the failure, when the log shows it
    # where else the same failure may be signed (grouping only): a failure inside the tests only names its
    # test method, so the same test run by two test classes (a subclass, a copied suite) joins one group
    joins: list[str] = field(default_factory=list)
    # the lines a program printed right above its traceback (categorising only: a response body it printed before
    # raising, ``<Code>SlowDown</Code>`` above ``HTTPError: HTTP Error 503``)
    preamble: str = ""


@dataclass
class Line:
    no: int  # 1-based line number in the input
    text: str  # cleaned
    level: str | None = None  # error | warning | info | None, from a level tag or annotation
    annotation: str | None = None  # a ##[...] / ::...:: workflow annotation kind
    cls: int = 0
    boundary: bool = False
    echoed: bool = False  # a line of a runner's echo of the script a step will run: never its output
    closed_by: int | None = None  # the index of the closing line that said this warning failed the build


# -- cleaning ------------------------------------------------------------------------------------
_ANSI = re.compile(
    r"\x1b\[[0-?]{0,40}[ -/]{0,10}[@-~]|\x1b[\]P_^X][^\x07\x1b]{0,1000}(?:\x07|\x1b\\)|\x1b[()*+][0-9A-Za-z]|"
    r"\x1b[@-Z\\-_]"
)  # CSI; the string controls OSC, DCS, APC, PM and SOS with their text up to BEL or ST (Buildkite's timestamp on
# every line is an APC: ESC _bk;t=1732664401123 BEL); a character-set designation (tput sgr0's ESC ( B); other
# two-byte escapes
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ISO_TS = r"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\]?"
_PREFIXES = [
    re.compile(r"^\ufeff"),
    re.compile(r"^[^\t]{1,200}\t[^\t]{0,200}\t(?=\ufeff?" + _ISO_TS + r")"),  # gh run view --log columns
    re.compile(r"^\ufeff?" + _ISO_TS + r"\s?"),
    re.compile(r"^\[\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?\]\s?"),
    # a status column after such a stamp, ending in a tab, and the names of the blocks the line is nested in
    # (TeamCity's ``[23:41:23] :\t [Step 1/2] ``, ``[23:41:24]E:\t [Step 1/2] ``): a block name has a space or a
    # slash in it, so a level tag (``[ERROR]``) after it stays evidence
    re.compile(r"^[A-Za-z]?:\t ?(?:\[[\w.:/-]{1,80}[ /][\w .:/-]{0,80}\] ?){0,8}"),
    re.compile(r"^==\d{1,9}== ?"),  # valgrind's process-id column
    # pytest's column before every line of an internal error's traceback (``INTERNALERROR>   File "x.py", line 3``):
    # the traceback under it is read as any other
    re.compile(r"^INTERNALERROR> ?"),
    # act's column naming the workflow and job before every line (``[CI/export]   | output``, ``[CI/export]   ❌  Failure
    # - Main ...``): a workflow's name and its job's, with a slash between
    re.compile(r"^\[[^\]/\n]{1,80}/[^\]\n]{1,80}\] {1,4}(?:\| ?)?"),
    # a time of day on a 12-hour clock (Netlify's ``7:52:36 AM: ``, on blank lines too): a clock with AM or PM is a
    # stamp, never a tool's ``line:column``
    re.compile(r"^\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,6})? ?[AaPp][Mm]:?(?:\s|$)"),
    re.compile(r"^\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?\s(?=\S)"),
    # a bracketed source name before a date and time: the runner speaks (AWS CodeBuild's ``[Container] 2026/11/27
    # 02:36:00.082499 Running command make test``); the date may be written with slashes or dashes
    re.compile(
        r"^\[(?!(?i:error|err|fatal|fail|failed|failure|severe|critical|crit|alert|emerg|warn|warning|info|debug|"
        r"trace|note|notice)\])[A-Za-z][\w -]{0,30}\] "
        r"\d{4}[/-]\d{2}[/-]\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\s?"
    ),
    # a runner's column naming the step a line comes from, before every line the step prints: a task and its step
    # (Tekton's ``[build : compile] ``), a step with the line's number and seconds since it started (Drone's
    # ``[build:L14:5s] ``); a level tag (``[ERROR]``) has neither shape and stays evidence
    re.compile(r"^\[[A-Za-z][\w.-]{0,60} : [A-Za-z][\w.-]{0,60}\] |^\[[A-Za-z][\w.-]{0,60}:L\d{1,7}:\d{1,7}s\] "),
    # a build target's column before every line its steps print (Earthly's ``+build | ...``, nested as ``+build |
    # +build | ERROR: ...``); a shell's trace (``+ cmd``) has a space after its plus
    re.compile(r"^\+[A-Za-z][\w.-]{0,60} \| ?"),
    # a build step's name column before every line it prints (Google Cloud Build's ``Step #1 - "test": ...``)
    re.compile(r'^Step #\d{1,4}(?: - "[^"\t]{0,100}")?: ?'),
    # ant's task column: every line a task prints, right-aligned under its name (``    [junit] ...``, ``  [javac]``)
    re.compile(r"^ {1,12}\[[a-z][\w-]{0,30}\] ?"),
    # a runner's stream or line-type column, then a date and time column, tab-separated (Bamboo's ``error<TAB>
    # 27-Nov-2026 04:36:05<TAB>...``: ``error`` there only says the line came on standard error, ``build`` on standard
    # output, ``simple``/``command`` that the runner speaks): the word is the runner's, not a level the tool printed
    re.compile(
        r"^[A-Za-z][\w-]{0,20}\t(?:\d{4}[/-]\d{2}[/-]\d{2}[T ]|\d{1,2}[-/ ][A-Za-z]{3}[-/ ]\d{4}[ T:])"
        r"\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\t"
    ),
]
_PREFIX = re.compile("|".join(f"(?:{p.pattern})" for p in _PREFIXES))
# a logger's own date (Go's log package, many daemons): what follows is a log record, whose "file.go:12:" is
# the logger's source location (log.Lshortfile), not a compiler's diagnostic
_LOG_DATE = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\s(?=\S)")
_ANNOTATION = re.compile(r"^##\[(\w{1,20})\]|^::(error|warning|notice|debug|group|endgroup)(?:\s[^:]{0,500})?::")
_LEVEL = re.compile(
    r"^\[(ERROR|FATAL|SEVERE|WARN|WARNING|INFO|DEBUG|TRACE|NOTE|CRITICAL)\]\s?|"
    r"^(ERROR|FATAL|CRITICAL|SEVERE|WARN|WARNING|INFO|DEBUG)(?::\s|\s-\s|\s{2,})"
)
_LEVEL_FIRST = frozenset("[EFCSWIDTN")
_LEVEL_NAMES = {
    "ERROR": "error",
    "FATAL": "error",
    "SEVERE": "error",
    "CRITICAL": "error",
    "WARN": "warning",
    "WARNING": "warning",
    "INFO": "info",
    "DEBUG": "info",
    "TRACE": "info",
    "NOTE": "info",
}


def _clean(raw: str) -> tuple[str, str | None, str | None]:
    """``(text, level, annotation)`` of one raw line."""
    if "\x1b" in raw:
        raw = _ANSI.sub("", raw)
    if raw.endswith("\r"):
        raw = raw.rstrip("\r")
    if "\r" in raw:  # an overwritten line: what the terminal finally shows
        raw = next((seg for seg in reversed(raw.split("\r")) if seg.strip()), "")
    if _CONTROL.search(raw):
        raw = _CONTROL.sub("", raw)
    text = raw
    for _ in range(3):  # prefixes start with a digit, "[", "=", "+", a BOM, or are tab-separated columns
        if not text or not (
            text[0].isdigit()
            or text[0] in "[=+\ufeff"
            or "\t" in text[:410]
            or (text[0] == " " and "] " in text[:45])
            or text.startswith(("Step #", "INTERNALERROR>"))
        ):
            break
        m = _PREFIX.match(text)
        if m is None or not m.end():
            break
        text = text[m.end() :]
    logged = False
    if text[:1].isdigit():
        m = _LOG_DATE.match(text)
        if m:
            text, logged = text[m.end() :], True
    annotation = None
    if text.startswith(("##[", "::")):
        m = _ANNOTATION.match(text)
        if m:
            annotation = (m.group(1) or m.group(2)).lower()
            text = text[m.end() :]
    level = "error" if annotation == "error" else "warning" if annotation == "warning" else "log" if logged else None
    if text[:1] in _LEVEL_FIRST:
        m = _LEVEL.match(text)
        if m:
            level = _LEVEL_NAMES[(m.group(1) or m.group(2))]
            text = text[m.end() :]
    return text.rstrip(), level, annotation


def clean_lines(text: str, first_no: int = 1) -> list[Line]:
    """Every line of ``text``, cleaned, numbered from ``first_no`` (blank lines kept)."""
    out = []
    for k, raw in enumerate(text.split("\n")):
        t, level, ann = _clean(raw)
        out.append(Line(no=first_no + k, text=t, level=level, annotation=ann))
    return out


# -- classification ----------------------------------------------------------------------------------
# a heading over a list of failures ("Failures:", "Errors:"), not an exception named Failures
_HEADING = re.compile(r"^(?:Failures?|Errors?|Exceptions?|Failed)\s?:?\s*$")
_PY_TB_START = re.compile(r"^\s*Traceback \(most recent call last\):?\s*$")
_PY_FRAME = re.compile(r'^\s*File "([^"]{1,1000})", line (\d{1,9})(?:, in (\S{1,300}))?')
_EXC_NAME = re.compile(r"(?:Error|Exception|Exit|Interrupt|Warning|Failure|Throwable|Fault)[\w$]{0,40}$")
_EXC = re.compile(
    r"^(?:Exception in thread \"[^\"]{0,200}\" )?(?:<ref \*\d{1,6}> )?(?:Caused by: |> )?(?:[A-Z]\s{1,8})?"
    r"([A-Za-z_][\w$]{0,200}(?:\.[A-Za-z_][\w$]{0,200}){0,30})(?::\s?(.{0,4000}))?$"
)
# a word that begins with an exception name's ending and goes on in lower case (``Exiting``, ``Errors``, ``Failures``):
# a word of a sentence or a count's label, never an exception's name
_EXC_WORD = re.compile(r"^(?:Error|Exception|Exit|Interrupt|Warning|Failure|Throwable|Fault)[a-z]")
_JAVA_FRAME = re.compile(r"^\s*at ([\w$.<>/-]{1,500})\(([^)]{0,300})\)")
_PYTEST_E = re.compile(r"^E\s{1,80}\S")

_ECHO = re.compile(
    r"^(?:\+{1,4} \S|\$ \S|> (?:git|cd|npm|yarn|pnpm|node|make|mvn|gradle|python|pip|cargo|go|sh|bash)\b|"
    r"\[command\]|\[Pipeline\] |Run [\w./-]|section_(?:start|end):\d|Step \d{1,4}/\d{1,4} : |"
    r"Running command |Executing |> Task :\S+\s*$)"
)
_MARKUP = re.compile(r"^</?[A-Za-z_][\w.-]{0,40}(?:\s[^<>]{0,200})?/?>$")
# a command's synopsis (argparse, getopt, click: ``usage: prog [-h] ...``), printed above the statement of what was
# wrong with the arguments (``prog: error: unrecognized arguments: --cov``): it says how to call, never what failed
_USAGE = re.compile(r"(?i)^usage:\s")
_STEP_ANNOTATIONS = {"group", "endgroup", "command", "section"}


class _Keyed:
    """A pattern behind a cheap necessary condition: every match of it holds one of ``keys``
    (lower-case literals), so a line holding none of them is not searched at all. Long logs are
    mostly lines that pass the first filter (a digit after ``:``, ``(`` or ``[``: test names,
    counters) and match nothing; searching each of these alternations there cost ~70 us a line.
    Whoever adds an alternative to the pattern adds its literal here (tests check the keys
    against every line of the CI-log corpus and generated lines)."""

    __slots__ = ("rx", "keys")

    def __init__(self, rx: re.Pattern[str], keys: tuple[str, ...]):
        self.rx, self.keys = rx, keys

    def _may(self, text: str) -> bool:
        low = text.lower()
        return any(k in low for k in self.keys)

    def search(self, text: str) -> re.Match[str] | None:
        return self.rx.search(text) if self._may(text) else None

    def match(self, text: str) -> re.Match[str] | None:
        return self.rx.match(text) if self._may(text) else None


_NOT_FAILURE = _Keyed(
    re.compile(
        r"(?i)\b0 (?:errors?|failures?|failed)\b|\b(?:errors?|failures?|failed)[:=]\s?0\b|\bno (?:errors?|failures?)\b|"
        r"\bwithout errors?\b|-Werror|errorprone|error_?prone|--fail-fast|\bfail-fast\b|\bon-?error\b|"
        r"# timeout=|\btimeout[=:]\s?\d|\b(?:passed|succeeded|success(?:ful(?:ly)?)?|ok)\b.{0,40}\b0 failed|"
        r"\bBUILD SUCCESS|\bSuccessfully\b|\bdeprecat|warning:|\bwarn(?:ing)?s?\b(?!.{0,40}\berror)|"
        r"\bskipped due to (?:an )?earlier failure|"
        # a cache a runner's step looked up and did not have (``Cache not found for input keys: setup-python-...``): a
        # miss is how a cache starts, never a failure
        r"^cache not found for (?:input )?keys?:|"
        # a checker's verdict that a file is clean (``php -l``'s ``No syntax errors detected in src/a.php``)
        r"\bno syntax errors? (?:detected|found)\b"
    ),
    ("err", "fail", "timeout", "success", "deprecat", "warn", "cache not found"),
)

# a build that failed because warnings are errors (javac's -Werror, mix --warnings-as-errors, gcc's
# -Werror): a failure although its words are a warning's
_WARNINGS_FAIL = re.compile(
    r"(?i)\bwarnings? (?:found and -Werror specified|(?:being )?treated as errors?)\b|\bfailed due to warnings\b"
)
# a line of counts that are all zero: ``Undefined: 0`` (bandit's metrics), ``errors=0, failures=0``, a report table's row
# ``|error      |0      |NC       |`` (pylint's): whatever the counted thing is called, none happened
_ZERO_COUNTS = re.compile(
    r"^[A-Za-z][\w ()./-]{0,60}\s?[:=]\s{0,8}0(?:\s{0,4}[,;]\s{0,4}[A-Za-z][\w ()./-]{0,60}\s?[:=]\s{0,8}0){0,20}\s*$|"
    r"^\|\s{0,4}[A-Za-z][\w ()./-]{0,60}\|\s{0,20}0\s{0,20}\|(?:[^|]{0,40}\|){0,10}$"
)
_FLAGS = re.compile(r"(?<!\S)-{1,2}[A-Za-z][\w.-]{0,60}(?:=\S{0,200})?")
_C5 = _Keyed(
    re.compile(
        r"(?:^|\s)panicked at\b|^panic: |^fatal error: (?!.{0,200}\.\w{1,5}: )|^Segmentation fault|"
        r"\bcore dumped\b|^Exception in thread |^Caused by: |^Killed\b|^Aborted\b|"
        r"^=> [\w$.]{1,300}(?:Error|Exception|Failure|Throwable)\w{0,40}(?::|$)|"  # JUnit console's ``=> org.x.YError: ...``
        r"^\*\* \([\w.]{1,200}(?:Error|Exception)\) |"  # Elixir's uncaught exception: ``** (ArithmeticError) bad argument``
        # the C++ runtime ending the program on an exception nothing caught (``terminate called after throwing an
        # instance of 'std::bad_alloc'``, then ``what():``), or with none active
        r"^terminate called (?:after throwing an instance of |without an active exception)"
    ),
    (
        "panic",
        "fatal error",
        "segmentation fault",
        "core dumped",
        "exception in thread",
        "caused by",
        "killed",
        "aborted",
        "=> ",
        "** (",
        "terminate called",
    ),
)
_C4 = re.compile(
    r"^(?:In file included from )?[\w./\\~@+-]{0,400}\.\w{1,8}(?::\d{1,7}(?::\d{1,5})?:|\(\d{1,7}(?:, ?\d{1,5})?\):|"
    r"\(\d{1,7}(?:, ?\d{1,5})?\) (?=(?:[Ff]atal )?(?:[Ee]rror|ERROR)\b)|"
    r":\[\d{1,7},\d{1,5}\])\s{0,3}(?:(?:fatal )?error\b|\S)(?<!warning)|"
    r"\berror\[E\d{1,5}\]|\berror TS\d{1,6}\b|\bundefined reference to\b|\bcannot find symbol\b|"
    r"\berror CS\d{1,5}\b|^ld(?:\.\w+)?: .{0,200}\berror\b"
)
_ERROR_PREFIX = re.compile(r"^(?:fatal )?error(?:\[[\w-]{1,20}\])?: [\w`'\"<(\[]")  # unindented: rustc, gcc, ...
_C4_FOUND = Prefiltered(_C4)  # .found(t): bool(_C4.search(t)), each alternative searched on its own (faster)
_C4_NOT = re.compile(
    r"(?i)^\S{0,400}?:\d{1,7}(?::\d{1,5})?:\s{0,3}(?:warning|note|info|hint|help)\b|"
    r"^\S+:\d+:\d+:\s{0,3}(?:in|from|required from)\b"
)
_C3 = _Keyed(
    re.compile(
        r"^(?:FAILED|FAIL|ERROR)(?::|\s)\s{0,3}\S|^--- FAIL: |^not ok \d|^\s{0,8}(?:✗|✕|×|✖)\s|"
        r"\bTests run: \d{1,9}, Failures: \d{1,9}, Errors: \d{1,9}.{0,200}<<< (?:FAILURE|ERROR)!|"
        r"^(?:npm (?:ERR!|error)|yarn error|error) (?!code\b|errno\b|A complete log|Lifecycle|Failed at|This is probably|"
        r"Exit status|path\b|command (?:sh|failed)|workspace|location|syscall|\s*$)|"
        r"^(?:fatal|error|Error|ERROR|E): \S|^make(?:\[\d{1,4}\])?: \*\*\* |^\S{1,400}:\d{1,7}: \*\*\* \S|"
        r"^\S{1,400}: line \d{1,7}: \S|^Failure/Error: \S|"
        r"^\s{0,8}\d{1,6}/\d{1,6} Test +#\d{1,6}: .{0,400}\*\*\*(?:Failed|Timeout|Exception)|"
        r"\bare (?:definitely|indirectly) lost in loss record\b|\bInvalid (?:read|write|free)\b|"
        r"depends on uninitialised value|"
        r"\b(?:command not found|[Nn]o such file or directory|[Pp]ermission denied|[Cc]onnection refused|"
        r"[Oo]peration not permitted|unbound variable|"
        r"not recognized as an internal or external command|Could not find a version that satisfies|"
        r"No matching distribution found|Cannot find module|Module not found|ModuleNotFoundError|ImportError|"
        r"Missing script|cannot open|could not open|unable to (?:open|find|resolve|locate|access|connect)|"
        r"Out of memory|out of memory|Cannot allocate memory|timed out|Timed out|Timeout exceeded|"
        r"not an element (?:in|of)|[Nn]o such key|[Nn]on-?parseable|[Uu]nparseable|"
        r"(?:[Cc]ould not|[Ff]ailed to|[Cc]annot|[Uu]nable to) parse|[Cc]an(?:not|'t) connect to)\b|"
        r"\s\u2718(?:\s|$)|"  # a test tree's failed mark after the test's name (JUnit console: ``name() \u2718 message``)
        r"^\s{0,8}\w[\w.]{0,100}\s\.{2,}\s(?:FAIL|FAILED|ERROR)\s*$|\bAssertionError\b|\b[Aa]ssertion .{0,200}failed\b|"
        # a patch that does not apply (GNU patch's ``1 out of 1 hunk ignored -- saving rejects to file x.rej`` and
        # ``Reversed (or previously applied) patch detected!  Skipping patch.``): the change fails, not a test
        r"^\d{1,6} out of \d{1,6} hunks? (?:FAILED|ignored)\b|^Reversed \(or previously applied\) patch detected!|"
        # a push the server refused, ref by ref (git's `` ! [remote rejected] main -> main (pre-receive hook declined)``,
        # `` ! [rejected] main -> main (non-fast-forward)``): the statement; ``error: failed to push some refs`` closes it
        r"^! \[(?:remote )?rejected\] {1,16}\S|"
        # unittest's report of a test expected to fail that passed (``UNEXPECTED SUCCESS: test_x (m.C.test_x)``), beside
        # its ``FAIL:`` and ``ERROR:`` reports
        r"^UNEXPECTED SUCCESS: \S|"
        # go run outside its module (``directory prefix . does not contain main module``)
        r"\bdoes not contain main module\b|"
        # a dependency's requirement no installed version meets (pkg-config's ``Package dependency requirement 'zlib >=
        # 1.3.1' could not be satisfied.``)
        r"\b(?:could not|cannot|can't) be satisfied\b"
    ),
    (
        "hunk",
        "reversed (or",
        "rejected]",
        "be satisfied",
        "unexpected success",
        "contain main module",
        "fail",
        "err",
        "not ok",
        "✗",
        "✕",
        "×",
        "✖",
        "fatal",
        "e: ",
        "***",
        ": line ",
        "lost in loss record",
        "invalid ",
        "uninitialised",
        "not found",
        "no such file",
        "denied",
        "refused",
        "not permitted",
        "unbound",
        "not recognized",
        "could not",
        "no matching",
        "cannot",
        "modulenotfound",
        "importerror",
        "missing script",
        "unable to",
        "out of memory",
        "timed out",
        "timeout",
        "assert",
        "not an element",
        "no such key",
        "parse",
        "connect to",
        "\u2718",
    ),
)
_C2 = _Keyed(
    re.compile(
        r"(?i)\b(?:error|errors|fatal|failed|failure|exception|panic|denied|refused|cannot|can not|can't|unable to|"
        r"not found|aborted|killed|invalid|unexpected|undefined|missing|could not find|couldn't find|"
        r"could not resolve|couldn't resolve|(?:could|can) ?not be found|can't be found)\b"
    ),
    (
        "error",
        "fatal",
        "fail",
        "exception",
        "panic",
        "denied",
        "refused",
        "cannot",
        "can not",
        "can't",
        "unable to",
        "not found",
        "aborted",
        "killed",
        "invalid",
        "unexpected",
        "undefined",
        "missing",
        "find",
        "resolve",
        "be found",
    ),
)
# a line that only reports that a process died of a signal: the shell's job report (``bash: line 1: 123
# Aborted  ./cmd``), a bare ``Killed``/``Aborted`` line, make's ``*** [target] Segmentation fault`` (anywhere in the
# line: a test's unterminated output may precede it), ``(core dumped)``
_SIGNAL = (
    r"(?:Aborted|Killed|Segmentation fault|Bus error|Illegal instruction|Floating point exception|Terminated|"
    r"Trace/breakpoint trap)(?: \(core dumped\))?"
)
_DEATH = re.compile(
    r"^" + _SIGNAL + r"\s*$|^(?:\S{1,200}: )?(?:line \d{1,7}: )?\s{0,8}\d{1,9}\s{1,40}" + _SIGNAL + r"\s|"
    r"\bmake(?:\[\d{1,4}\])?: \*\*\* \[[^\]]{1,400}\] " + _SIGNAL + r"|\bSegmentation fault\b|\bcore dumped\b"
)
_SIGNAL_WORDS = (
    "Aborted",
    "Killed",
    "Segmentation",
    "Bus error",
    "Illegal",
    "Floating",
    "Terminated",
    "Trace/",
    "dumped",
)
_DEATH_LOOKBACK = 60
# the killed command ran under a deadline (``timeout -s KILL 3 ./x``): the death is the failure, not a trailer
_KILLED_BY_DEADLINE = re.compile(r"\btimeout\b")  # lines before a death report searched for the message it trails
# a heading that announces a list of failures: its first item is the failure, not the heading
_ANNOUNCES = re.compile(
    r"(?i)^(?:there (?:was|were) \d{1,6} (?:failures?|errors?)|=+ (?:failures|errors) =+|failures?|errors?|"
    r"[=\u2550\u2500-]{2,} (?:failed|failures?|errors?) [=\u2550\u2500-]{2,}):?\s*$"  # testthat's ``══ Failed ══``
)
# a numbered item (``1) Test::name``, testthat's ``── 1. Failure (...)``), a pytest test header
_ITEM = re.compile(r"^(?:\d{1,4}\) \S|[=\u2550\u2500-]{2,} \d{1,4}\. \S|_{3,} \S.{0,400} _{3,}$)")
# a count that closes a list of the files a checker found at fault ("Code style issues found in 2 files")
_FILES_COUNT = re.compile(
    r"(?i)\b(?:issues?|problems?|errors?|violations?|findings?) (?:were )?found in \d{1,6} files?\b|"
    r"^\d{1,6} files? would be (?:reformatted|changed|fixed)\b"
)
_POINTS_BELOW = re.compile(r"(?i)\b(?:described|listed|shown|reported) below\b|\bsee below\b")
_STRUCTURE_WORDS = (
    "ail",
    "AIL",
    "rror",
    "RROR",
    " found in ",
    "would be",
    "___ ",
    "everity:",
    "EVERITY:",
)  # lines _structure may act on
_STRUCTURE_RX = re.compile(literal_set_pattern(_STRUCTURE_WORDS))  # (a test for any of them, faster)
_TAG = re.compile(r"^\[\w{1,10}\]\s")
_SEVERITY = re.compile(
    r"(?i)^severity:\s{0,8}(?:info|low|medium|moderate|high|critical|minor|major|blocker|undefined|unknown)\b"
)
_FILE_NAME = re.compile(r"^[\w.@+~-]{0,255}(?:[\\/][\w.@+~-]{1,255}){0,64}\.\w{1,10}$")
# a formatter's finding about one file, whatever the formatter
_FORMAT_FINDING = re.compile(
    r"(?i)^would (?:reformat|reorder|fix) \S|\bimports are incorrectly sorted\b|\bis not (?:properly )?formatted\b|"
    r"\bneeds? (?:re)?formatting\b"
)
# a pointer under a source line (``---^``, ``   ^~~~``): detail of the statement above it, never a statement
_POINTER = re.compile(r"(?:^|\s|-)\^[\^~-]{0,400}\s*$")
# a pointer that carries a rule code and its message: a checker's finding at the pointed place
_RULE_POINTER = re.compile(r"^\^[-~^]{0,400}\s{1,4}[A-Z]{1,8}\d{1,6}\b(?: \(\w{1,12}\))?:\s\S")
# a stack frame printed as ``file:line: in function`` (Lua, pytest --tb=short): not a diagnostic
_FRAME_LINE = re.compile(r"^\S{1,400}:\d{1,7}(?::\d{1,5})?:\s{0,3}(?:in|from|required from)\b(?:(?!: ).){0,300}$")
# other runtimes' stack frames (where, never what): a location followed only by the function it is in
# (Elixir and Erlang name it module.function/arity: ``test/x_test.exs:20: (test)``, ``(elixir 1.14.0)
# lib/gen_server.ex:1035: GenServer.call/3``), Erlang's ``in call from m:f/2 (m.erl, line 71)``, Haskell's
# CallStack ``error, called at src/M.hs:633:17 in pkg:M``
_RUNTIME_FRAME = re.compile(
    r"^(?:\([\w .+-]{1,60}\) )?\S{1,400}:\d{1,7}: (?:\((?:test|module|file|describe|setup)\)|"
    r"(?:anonymous fn/\d{1,3} in )?[\w.:'\"$?!@-]{1,200}/\d{1,3})$|"
    r"^in (?:function|call from) \S{1,300} \([^()]{1,300}, line \d{1,7}\)$|"
    r"\bcalled at \S{1,400}:\d{1,7}:\d{1,5} in \S{1,300}$"
)


def is_frame(text: str) -> bool:
    """Whether a (cleaned) line is a stack frame: where the failure happened, never what it is."""
    t = text.strip()
    return bool(("in " in t or "from " in t) and _FRAME_LINE.match(t)) or bool(
        ("/" in t or "called at" in t or ": (" in t) and _RUNTIME_FRAME.search(t)
    )


# the openings of Perl's warnings (perldiag's W class), which end with the same location as its die but are not fatal
_PERL_WARNING = (
    r"Use of uninitialized value|Useless use of|Possible (?:precedence|attempt|unintended)|Argument \"|"
    r"Odd number of elements|Name \"|Subroutine \S{1,200} redefined|Deep recursion|Wide character|Scalar value|"
    r"Parentheses missing|Unquoted string|Found = in conditional|Statement unlikely|Variable \"|\"my\" variable|"
    r"Prototype mismatch|Smartmatch is|Constant subroutine|Reversed \S{1,4} operator|Misplaced _|Illegal character in prototype"
)
# an interpreter reporting the location in its script: ``lua5.4: gen.lua:5: attempt to ...``
_PROGRAM_LOCATED = re.compile(
    r"^(?!(?i:note|info|hint|help|warning|debug|trace):)[\w.+-]{1,40}: [\w./\\~@+-]{1,400}\.\w{1,8}:\d{1,7}(?::\d{1,5})?: \S"
)
# a message that ends with the script location Perl's die/croak appends (``malformed JSON string, ... at stamp.pl line
# 8.``, ``Can't locate object method ... at flush.pl line 10.``); not one of its warnings, which end the same way
_PERL_DIE = re.compile(
    r"^(?!\s|(?i:note|info|hint|help|warning|debug|trace|deprecated)\b|" + _PERL_WARNING + r").{0,600}?\S at "
    r"\S{1,400}\.(?:pl|pm|t|cgi|psgi) line \d{1,7}\.?$"
)
_PERL_TAIL = re.compile(r"\.(?:pl|pm|t|cgi|psgi) line \d{1,7}\.?$")  # (a cheap test of the end before _PERL_DIE)
# an exception that is how an outer failure works (a timeout cancels its task), not a root cause of its own
_CANCELLATION = re.compile(r"(?:Cancelled|Canceled|Cancellation|Interrupted)(?:Error|Exception)\b|\bcontext canceled\b")
_DIFF_HUNK = re.compile(
    r"^@@ -\d{1,9}(?:,\d{1,9})? \+\d{1,9}(?:,\d{1,9})? @@|^Diff in \S{1,400}(?::\d{1,7}:| at line \d)"
)
_C1 = _Keyed(
    re.compile(
        r"^make(?:\[\d{1,4}\])?: \*\*\* .{0,400}\bError \d{1,4}|\bexit(?:ed)?(?: with)?(?: exit)? (?:code|status):? '?-?\d{1,4}\b|"
        r"\b(?:returned|exited with) (?:a )?non-zero (?:exit )?(?:code|status)\b|\bscript returned exit code\b|"
        r"^(?:BUILD FAILURE|BUILD FAILED|FAILURE: Build failed with an exception|Finished: FAILURE)\b|"
        r"\bJob failed\b|\bcould not compile\b|^error: Recipe |\bCommand failed with exit code\b|"
        r"^error: (?:\d+ )?(?:tests?|build|command|process|script) failed\b|"
        r"^\d{1,3}% tests passed, \d{1,9} tests? failed out of \d{1,9}|^ERROR SUMMARY: [1-9]\d{0,8} errors? from|"
        r"^(?:npm (?:ERR!|error)|yarn error) (?:code|errno|A complete log|Lifecycle|Failed at|This is probably|"
        r"Exit status|command failed|path\b|command sh|workspace|location|syscall)|"
        r"^=+ .{0,200}\b\d{1,9} (?:failed|errors?)\b.{0,200}=+$|^FAILED \((?:failures|errors|unexpected successes)=\d|"
        r"^Found \d{1,9} errors?\b|\bTests? failed\b|^Test failed\.|^(?:\d{1,9} )?errors? generated\.|"
        r"\bsubprocess-exited-with-error\b|\bErrors? (?:occurred|were found)\b|^Execution failed for task|"
        r"^(?:> Task )?:\S+ FAILED$|\b(?:are|were) test failures\b|^Error: Test failures$|^\d{1,9} errors?$|^Tests: .{0,100}\b\d{1,9} failed\b|^test result: FAILED\b|"
        r"^FAIL\s*$|^FAIL\s+\S+\s+[\d.]+s$|^error: could not compile|^Ran \d{1,9} tests? in |^ERROR: Job failed|"
        r"\bexecution of an external program failed\b|"  # Nim's ``nim c -r``: the test program exited non-zero
        # a build stopped for the warnings it printed (mkdocs --strict's ``Aborted with 2 warnings in strict mode!``,
        # ESLint's ``ESLint found too many warnings (maximum: 0).``): a closing line, the warnings are what failed
        r"^Aborted with \d{1,9} warnings?\b|\bfound too many warnings\b|"
        r"^\[\s{0,20}\d{1,9} (?:tests?|containers?) (?:failed|aborted)\s{0,20}\]$|"  # JUnit console's count boxes
        # a tool giving up because of what it (or a program it ran) printed above: a status, the statement is above it
        # (gcc's driver ``collect2: error: ld returned 1 exit status``, GNU tar's ``tar: Child returned status 1`` and
        # ``tar: Error is not recoverable: exiting now`` / ``Exiting with failure status due to previous errors``,
        # TAP::Harness's ``Failed 2/5 subtests``), and a runner's closing word alone on its line (``failed``: fly's)
        r"\breturned (?:\d{1,3} exit status|status \d{1,3})$|"
        r"^(?:[\w.+-]{1,40}: )?(?:Error is not recoverable: exiting now|Exiting with failure status due to previous "
        r"errors)$|^Failed \d{1,6}/\d{1,6} subtests\b|^(?i:failed|failure|error)[.!]?$|"
        # a runner's or a tool's closing line over what failed above it: git's ``error: failed to push some refs to
        # 'x'`` (its refs' rejections above it), TeamCity's ``Step Fetch fixtures (Command Line) failed``, act's ``❌  Failure - Main ruby export.rb`` and
        # ``exitcode '1': failure``
        r"^error: failed to push some refs\b|^(?:E: )?Step .{1,200} \([\w .-]{1,60}\) failed$|"
        r"^(?:\u274c\s{1,4})?Failure - (?:Main|Pre|Post) \S|^exitcode '\d{1,3}': failure$|"
        # Bamboo's: ``Failing task since return code of [...] was 1 while expected 0``, ``Finished task 'x' with result:
        # Failed``
        r"^Failing task since return code\b|^Finished task '.{1,200}' with result: Failed$|"
        # AWS CodeBuild's phase result (``Phase complete: BUILD State: FAILED``)
        r"^Phase complete: \w{1,40} State: FAILED$"
    ),
    ("exit", "fail", "err", "compil", "ran ", "abort", "many warn", "returned"),
)
# a closing line that says the warnings above it failed the build: they are the failure it points back at
_CLOSES_ON_WARNINGS = re.compile(
    r"(?i)\bwarnings? (?:found and -Werror specified|(?:are |were |being )?treated as errors?)\b|"
    r"\bfailed due to warnings\b|^Aborted with \d{1,9} warnings?\b|\bfound too many warnings\b|"
    r"\bwarnings? in strict mode\b|\bfinished with problems\b"
)
# a warning in a checker's words: ``warning: ...``, ``file:3: warning ...``, ESLint's stylish ``12:5  warning  ...``
_WARN_FINDING = re.compile(r"(?i)^(?:\S{1,400}:\d{1,7}(?::\d{1,5})?:?\s{1,8}|\d{1,7}:\d{1,5}\s{1,8})?warning\b")
_POINT_BACK_LINES = 400  # lines above a closing line searched for the report it points back at


# the C library's messages for the errors a system call reports (strerror), which a program prints after what it was
# doing (``chown: changing ownership of 'x': Operation not permitted``, ``cp: cannot create regular file 'x': Read-only
# file system``): said by the system, they state a failure without a failure word of the program's own
_ERRNO_WORDS = (
    "Operation not permitted",
    "No such file or directory",
    "Permission denied",
    "File exists",
    "Is a directory",
    "Not a directory",
    "Directory not empty",
    "Read-only file system",
    "No space left on device",
    "Disk quota exceeded",
    "Device or resource busy",
    "Text file busy",
    "Too many open files",
    "File too large",
    "File name too long",
    "Argument list too long",
    "Exec format error",
    "Too many levels of symbolic links",
    "Invalid cross-device link",
    "Bad file descriptor",
    "Broken pipe",
    "Input/output error",
    "Resource temporarily unavailable",
    "Operation not supported",
    "Function not implemented",
    "Connection refused",
    "Connection reset by peer",
    "Network is unreachable",
    "No route to host",
    "Address already in use",
    "Cannot assign requested address",
)
# a program's complaint: its name (or path), a colon, what it says (``sed: -e expression #1, char 40: unterminated `s'
# command``); not a label a tool prints before a note or a setting (``note: ...``, ``Location: ...``: capitalised)
_PROGRAM = r"(?!(?:note|info|hint|help|warning|warn|debug|trace|notice|usage|tip|see|error|fatal|http|https|file)\b)"
_COMPLAINT = re.compile(r"^" + _PROGRAM + r"(?:[a-z][\w.+-]{0,39}|\.{0,2}/[\w./+-]{1,200}): (?=\S)(?!\d{1,9}\s*$)")
_ERRNO_END = re.compile(r": (?:" + "|".join(_ERRNO_WORDS) + r")\.?$")


def _complaint(t: str) -> bool:
    """Whether a (cleaned, stripped) line is a program's complaint in its own words: ``prog: message`` where the
    message is a sentence (at least three words), not a setting (``image: python:3.11``)."""
    return _COMPLAINT.match(t) is not None and t.count(" ") >= 3 and "=" not in t[: t.find(":")]


# a cheap filter before the classes: a line holding none of these cannot be anything but plain
_ANY_WORDS = (
    "err",
    "fail",
    "exception",
    "panic",
    "traceback",
    "fatal",
    "denied",
    "refused",
    "not found",
    "not an element",
    "no such",
    "cannot",
    "can not",  # (GNU ld's spelling: ``relocation ... can not be used when making a shared object``)
    "can't",
    "unable",
    "kill",
    "abort",
    "exit",
    "timed out",
    "time out",
    "timeout",
    "assert",
    "missing",
    "invalid",
    "undefined",
    "unexpected",
    "segmentation",
    "core dumped",
    "terminated",
    "illegal instruction",
    "floating point exception",
    "trace/breakpoint",
    "not ok",
    "caused by",
    "not recognized",
    "out of memory",
    "could not",
    "cannot allocate",
    "***",
    "no rule",
    "unbound variable",
    ": line ",
    "definitely lost",
    "uninitialised",
    "diff in ",
    "@@ -",
    "-->",
    "✗",
    "✕",
    "×",
    "✖",
    "\u2718",
    "be found",
    "parse",
    "connect",
    "terminate called",
    ".pl line ",  # Perl's die location (``... at stamp.pl line 8.``)
    ".pm line ",
    ".t line ",
    ".cgi line ",
    ".psgi line ",
    "not permitted",
    "many warn",
    "returned status",
    "contain main module",  # (go's ``directory prefix . does not contain main module``)
    "rejected]",  # a push the server refused (`` ! [remote rejected] main -> main (...)``)
    "be satisfied",  # (``... could not be satisfied``)
    "hunk",  # a patch that does not apply (``1 out of 1 hunk ignored``, ``Reversed (or previously applied) patch``)
    "reversed (or",
) + tuple(w.lower() for w in _ERRNO_WORDS)
_ANY_START = (
    "e ",
    "e\t",
    "+ ",
    "$ ",
    "> ",
    "run ",
    "[command",
    "[pipeline",
    "section_",
    "step ",
    "running command",
    "executing ",
    "=> ",
)
_DIGITISH = re.compile(r"[:(\[]\d")
# a tool's own error report, numbered: its name, the error's number in parentheses, the message (curl's ``curl: (60)
# SSL certificate problem: self-signed certificate``, ``curl: (6) Could not resolve host``): a failure statement,
# whatever words its message uses (the explanation a tool prints under it is not)
_NUMBERED_ERROR = re.compile(r"^[\w.+-]{1,40}: \([1-9]\d{0,3}\) \S")  # (0) is no error: ``status: (0) ok``


_ANY_RX = re.compile(literal_set_pattern(_ANY_WORDS + RUNTIME_REPORTS))  # (a trie of the words: faster; a test only)
# what a runtime prints when it finds its memory corrupted or misused (glibc's ``free(): double free detected in tcache
# 2``, ``*** stack smashing detected ***: terminated``; Valgrind's ``Mismatched free() / delete / delete []``): the
# statement of a failed run, though it has no failure word (failure_lexicon_tables.RUNTIME_REPORTS, lower case)
_RUNTIME_REPORT = re.compile(literal_set_pattern(RUNTIME_REPORTS))


# the line of an exception group itself, in the box Python draws around a group's printout (``| ExceptionGroup:
# unhandled errors in a TaskGroup (2 sub-exceptions)``); its members' lines are drawn further in
_GROUP_HEAD = re.compile(r"^\| (?:[A-Za-z_][\w.]{0,200}\.)?(?:Base)?ExceptionGroup: \S")


# an exception named with its error code in brackets, then its message: node's ``TypeError [ERR_INVALID_ARG_TYPE]: The
# "path" argument must be ...``, ``Error [ERR_MODULE_NOT_FOUND]: Cannot find module ...``
_CODED_EXC = re.compile(r"^((?:[A-Za-z_][\w$]{0,200})?(?:Error|Exception)) \[[A-Za-z][A-Za-z0-9_]{1,60}\]: \S")


def _coded_exc(t: str) -> str | None:
    m = _CODED_EXC.match(t) if "]: " in t else None
    return m.group(1) if m else None


def _maybe(t: str) -> bool:
    low = t.lower()
    return low.startswith(_ANY_START) or _DIGITISH.search(t) is not None or _ANY_RX.search(low) is not None


# Test::More's diagnostic when a test script's plan and its run disagree (``# Looks like you planned 5 tests but ran
# 3.``): the statement of the failure (a script that stopped early printed nothing else); its other end-of-test
# lines (``# Looks like you failed 2 tests of 5.``, ``... exited with 255 just after 3.``) are counts or statuses
_TAP_BAD_PLAN = re.compile(r"^# Looks like you planned \d{1,9} tests? but ran \d{1,9}\.?$")


def _classify(ln: Line) -> None:
    t = ln.text.strip()
    if not t:
        return
    if t[:1] == "#" and _TAP_BAD_PLAN.match(t):
        ln.cls = 3
        return
    if ln.annotation is None and ln.level != "error" and not _maybe(t):
        return
    if ln.annotation in _STEP_ANNOTATIONS or _ECHO.match(t) or _MARKUP.match(t):
        ln.boundary = True  # a step header, an echoed command, or a harness's wrapper tag (<output>)
        return
    if t.startswith('Commit message: "'):
        return  # a runner quoting the commit it checked out (Jenkins's git plugin): a person's words, not the build's
    if _USAGE.match(t):
        return  # a synopsis, even behind an error tag (pytest's ``ERROR: usage: ...``), is not a failure statement
    if t[-1:] in "0|" and _ZERO_COUNTS.match(t):
        return  # counts that are all zero (``Undefined: 0``, ``Errors: 0``, ``|error |0 |``): nothing of the kind happened
    if _C1.search(t):
        ln.cls = 1
        if _C3.match(t) and t.startswith("FAILED ") and "::" in t:  # pytest's FAILED path::test - reason
            ln.cls = 3
        return
    if _RUNTIME_REPORT.search(t.lower()):
        ln.cls = 3  # a runtime's report of corrupted or misused memory (a signal line under it points back at it)
        return
    if _PY_TB_START.match(t) or _PYTEST_E.match(ln.text):
        ln.cls = 5
        return
    if t.startswith("| ") and _GROUP_HEAD.match(t):
        ln.cls = 5  # an exception group's own line, drawn in its box (pytest prints the box without its header)
        return
    if "]: " in t and _CODED_EXC.match(t):
        ln.cls = 5  # an exception named with its error code (node's ``TypeError [ERR_INVALID_ARG_TYPE]: ...``)
        return
    m = _EXC.match(t)
    if (
        m
        and _EXC_NAME.search(m.group(1))
        and not _EXC_WORD.match(m.group(1))
        and (m.group(2) is not None or t == m.group(1))
        and " " not in m.group(1)
        and not _HEADING.match(t)
    ):
        ln.cls = 5
        return
    if _C5.search(t) or (any(w in t for w in _SIGNAL_WORDS) and _DEATH.search(t)):
        ln.cls = 5
        return
    if "^" in t and _RULE_POINTER.match(t):
        ln.cls = 3  # a pointer carrying a checker's rule code and message (``^--^ SC2086 (info): ...``): a finding
        return
    if "^" in t and _POINTER.search(t) and not re.search(r"\w{3,}\s*:", t):
        return  # a pointer under the line above (``error here ---^``): that line is the statement
    frame = is_frame(t)
    if (
        (_C4_FOUND.found(t) or _ERROR_PREFIX.match(ln.text))
        and not _C4_NOT.search(t)
        and not frame
        and ln.level != "log"
    ):
        ln.cls = 4
        return
    if frame:
        return  # a stack frame (``gen.lua:5: in local 'f'``) is where, never what
    if ln.level == "warning":
        return  # a warning (##[warning], [WARNING]) is not the failure
    if "arning" in t and _WARNINGS_FAIL.search(t):
        ln.cls = 3  # the build failed on its warnings: a failure, however much it says "warning"
        return
    t = _FLAGS.sub(" ", t)  # command-line flags are configuration (--output-on-failure, -Werror)
    if _NOT_FAILURE.search(t):
        return
    if ": (" in t and _NUMBERED_ERROR.match(t):
        ln.cls = 2
        return
    if ": " in t and _ERRNO_END.search(t) and _COMPLAINT.match(t):
        ln.cls = 3  # a program reporting what the system refused it (``chown: ...: Operation not permitted``)
        return
    if (
        _C3.search(t)
        or (("ormat" in t or "sorted" in t or "ould " in t) and _FORMAT_FINDING.search(t))
        or _PROGRAM_LOCATED.match(t)
        or (_PERL_TAIL.search(t[-30:]) and _PERL_DIE.match(t))
    ):
        ln.cls = 3
        return
    if ln.level == "error" or ln.annotation == "error":
        ln.cls = 2
        return
    if _C2.search(t) or _DIFF_HUNK.match(t):
        ln.cls = 2  # (a diff hunk: what a formatter's or a diff check's step failed on, when nothing else is)


# -- tracebacks (unchanged rules: the root cause and its application frames) -------------------------
_LIB_PY = re.compile(
    r"site-packages|dist-packages|[\\/]lib[\\/]python\d|<frozen|[\\/]_pytest[\\/]|[\\/]pluggy[\\/]|"
    r"[\\/]unittest[\\/]|<string>"
)
_LIB_JAVA = re.compile(
    r"^(?:java|javax|jdk|sun|com\.sun|junit|org\.junit|org\.apache\.tools\.ant|org\.hamcrest|"
    r"org\.easymock|org\.mockito|org\.gradle|org\.apache\.maven|kotlin|scala|groovy|"
    r"org\.codehaus\.groovy|net\.bytebuddy|worker\.org\.gradle)\."
)
_TESTISH = re.compile(r"(?:^|[.$/\\])(?:Test\w*|\w*Tests?|\w*TestCase|test_\w+|\w+_test)(?:[.$(]|$)|\.tests?\.")
_ANON = re.compile(r"\$\$Lambda\$[\w/$]*|\$\d+(?=[.$]|$)")


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path)[-1]


def _exc_of(line: str) -> str | None:
    m = _EXC.match(line.strip())
    if m and _EXC_NAME.search(m.group(1)):
        return m.group(1).rsplit(".", 1)[-1]
    return None


def _header_name(text: str) -> str:
    m = _EXC.match(text.strip())
    return m.group(1) if m else ""


def _java(lines: list[Line], lo: int, hi: int) -> Excerpt | None:
    """The root cause of the last Java trace in lines[lo:hi]: the last exception header with frames under it."""
    headers = []  # (header line, first frame line): a message may run over several lines before its frames
    pending = None
    for i in range(lo, hi):
        t = lines[i].text
        if _JAVA_FRAME.match(t):
            if pending is not None:
                headers.append((pending, i))
                pending = None
            continue
        st = t.strip()
        m = _EXC.match(st) if st else None
        if (
            m
            and _EXC_NAME.search(m.group(1))
            and " " not in m.group(1)
            # Java names an exception by its qualified class: while a qualified header waits for its
            # frames, an unqualified `Warnings:` line is more of its message, not a new header
            and not (pending is not None and "." not in m.group(1) and "." in _header_name(lines[pending].text))
        ):
            pending = i
        elif pending is not None and i - pending > _MAX_MESSAGE_LINES:
            pending = None
    if not headers:
        return None
    start, first_frame = headers[-1]
    if (
        len(headers) > 1
        and lines[start].text.lstrip().startswith("Caused by:")
        and _CANCELLATION.search(lines[start].text)
    ):
        start, first_frame = headers[-2]  # a cancellation is how the failure it caused works (see _past_cancellation)
    m = _EXC.match(lines[start].text.strip())
    assert m is not None  # the header matched _EXC in the scan above
    frames, end = [], start
    for j in range(first_frame, hi):
        fm = _JAVA_FRAME.match(lines[j].text)
        if not fm:
            if lines[j].text.strip().startswith("..."):
                end = j
                continue
            break
        frames.append(_ANON.sub("", fm.group(1)))
        end = j
    app = [f for f in frames if not _LIB_JAVA.match(f)]
    key = next((f for f in app if not _TESTISH.search(f)), None)
    exc = m.group(1)
    if key is not None and exc.endswith("StackOverflowError"):
        key = _recursion_key(app) or key
    joins = []
    if key is None and app:  # failing inside the tests only: the test class (the outermost frame's)
        key, method = app[-1].rsplit(".", 1) if "." in app[-1] else (app[-1], "")
        if method:
            joins.append(f"test method {method}")  # (method 10) the test, wherever it is run
    ex = Excerpt(
        message=f"{exc}: {_open_value_message(m.group(2) or '', lines, start + 1, first_frame)}".strip(),
        exception=exc.rsplit(".", 1)[-1],
        frame=key,
        frames=app,
        kind="java",
        joins=joins,
    )
    return _with_block(ex, lines, start, min(end, start + MAX_BLOCK_LINES - 1))


_MAX_VALUE_LINES = 40  # lines a value opened on a message's first line may run over


def _open_value_message(first: str, lines: list[Line], lo: int, hi: int) -> str:
    """A Java message's first line, or more of it when a value opened there runs on: JUnit's
    ``expected:<a\nb> but was:<a\nc>`` prints a multi-line value as it is, so the first line
    alone (``expected:<a``) would sign every such failure apart from its one-line twins. The
    value's lines, up to where its brackets balance (bounded), are joined with spaces."""
    depth = first.count("<") - first.count(">") + first.count("[") - first.count("]")
    if depth <= 0 or "xpected" not in first:
        return first
    parts = [first]
    for k in range(lo, min(hi, lo + _MAX_VALUE_LINES)):
        t = lines[k].text
        parts.append(t.strip())
        depth += t.count("<") - t.count(">") + t.count("[") - t.count("]")
        if depth <= 0:
            break
    return " ".join(p for p in parts if p)


def _recursion_key(app: list[str]) -> str | None:
    """The frame a stack overflow keys on: where the stack ran out inside a recursion is chance,
    so of the application frames that repeat (the cycle) the first in sorted order."""
    counts = collections.Counter(app)
    repeated = [f for f, n in counts.items() if n > 1]
    return min(repeated) if repeated else None


def _python(lines: list[Line], lo: int, hi: int) -> Excerpt | None:
    starts = [i for i in range(lo, hi) if _PY_TB_START.match(lines[i].text)]
    if not starts:
        return None
    exc_at = _tb_exception(lines, starts[-1], hi)
    if exc_at is None:
        return None
    frames, last_frame_at = [], starts[-1]
    for j in range(starts[-1] + 1, exc_at):
        fm = _PY_FRAME.match(lines[j].text)
        if fm:
            frames.append((fm.group(1), fm.group(3) or "<module>"))
            last_frame_at = j
    exc_line = lines[exc_at].text.strip()
    app = [f"{_basename(path)}:{func}" for path, func in frames if not _LIB_PY.search(path)]
    key = next((f for f in reversed(app) if not _TESTISH.search(f.split(":")[0])), None)
    joins = []
    if key is None and app:
        key = app[-1].split(":")[0]
        test = app[0].rsplit(":", 1)[-1]  # the outermost frame: the test function the runner called
        if test != "<module>":
            joins.append(f"test method {test}")
    ex = Excerpt(message=exc_line, exception=_exc_of(exc_line), frame=key, frames=app, kind="python", joins=joins)
    ex.preamble = _preamble(lines, lo, starts[0])
    # the block: the innermost frame (where) and the exception with its detail lines
    start = last_frame_at if exc_at - last_frame_at <= 3 else exc_at
    return _with_block(ex, lines, start, _detail_end(lines, exc_at, hi))


_PREAMBLE_LINES = (
    8  # non-blank lines above a failure read as what the program printed before it (a pretty-printed body)
)


def _preamble(lines: list[Line], lo: int, at: int) -> str:
    """Up to ``_PREAMBLE_LINES`` non-blank lines of the step right above line ``at`` (a traceback's start, a decisive
    block's), in order."""
    got: list[str] = []
    for j in range(at - 1, lo - 1, -1):
        if lines[j].boundary or len(got) >= _PREAMBLE_LINES:
            break
        t = lines[j].text.strip()
        if t:
            got.insert(0, t[:2000])
    return "\n".join(got)


def _detail_end(lines: list[Line], at: int, hi: int) -> int:
    """The last line of the detail under a decisive line: following non-blank lines that are
    not a new step, a trailer or an unrelated statement, bounded."""
    end = at
    for j in range(at + 1, min(hi, at + MAX_BLOCK_LINES)):
        ln = lines[j]
        t = ln.text.strip()
        if not t or ln.boundary or ln.cls == 1:
            break
        if ln.cls >= 3 and not (
            ln.text[:1].isspace()
            or _PYTEST_E.match(ln.text)
            or _JAVA_FRAME.match(ln.text)
            or t.startswith(("-->", "|", "^", "=", "note:", "help:", "symbol", "location"))
        ):
            break
        end = j
    return end


def _with_block(ex: Excerpt, lines: list[Line], start: int, end: int) -> Excerpt:
    block = "\n".join(lines[k].text.rstrip() for k in range(start, end + 1)).strip("\n")
    ex.block = block[:MAX_BLOCK_CHARS]
    ex.lines = (lines[start].no, lines[end].no)
    return ex


def _pytest(lines: list[Line], at: int, hi: int) -> Excerpt:
    """A pytest ``E`` block: its exception line (or first line) is the message; the location
    line after it (``path.py:12: AssertionError``) gives the frame."""
    j = at
    while j > 0 and _PYTEST_E.match(lines[j - 1].text):
        j -= 1
    start, end = j, j
    e_lines = []
    while end < hi and _PYTEST_E.match(lines[end].text) and end - start < 40:
        e_lines.append(lines[end].text[1:].strip())
        end += 1
    end -= 1
    exc_line = next((x for x in e_lines if _exc_of(x) and ":" in x), None)
    message = exc_line or (e_lines[0] if e_lines else lines[at].text.strip())
    exception = _exc_of(exc_line) if exc_line else None
    frame = None
    for k in range(end + 1, min(hi, end + 4)):
        m = re.match(r"^([\w./\\-]{1,400}\.py):\d{1,7}: (\w{1,80})\s*$", lines[k].text.strip())
        if m:
            frame = _basename(m.group(1))
            exception = exception or (m.group(2) if _EXC_NAME.search(m.group(2)) else None)
            end = k
            break
    if exception and not exc_line:
        message = f"{exception}: {message}"
    ex = Excerpt(message=message, exception=exception, frame=frame, kind="pytest")
    return _with_block(ex, lines, start, min(end, start + MAX_BLOCK_LINES - 1))


_PANIC_AT_END = re.compile(r"panicked at \S{1,400}:\d{1,7}:\d{1,5}:$")
_ARROW = re.compile(r"^\s{0,12}--> \S{1,400}:\d{1,7}")  # a diagnostic's location line (rustc, ruff, ...)
_WARN_HEAD = re.compile(r"(?i)^(?:warning|note|help|info)\b")


_CAUSED_BY = re.compile(r"^\s{0,40}(?:Caused by|\[cause\]|cause):\s{0,4}(.{0,2000})$")
_PY_CHAIN = re.compile(
    r"^\s*(?:The above exception was the direct cause of the following exception|"
    r"During handling of the above exception, another exception occurred):?\s*$"
)
_RETRY = re.compile(
    r"(?i)^(?:[\w ]{0,20}: )?retrying\b|\btries remaining\b|\bretrying in \d|\bwill retry\b|"
    r"^(?:[\w ]{0,20}: )?.{0,80}\battempt \d{1,4} ?(?:of|/) ?\d{1,4}\b"
)  # a tool's own status line, not a source line that names a retry setting
_SETTLED = re.compile(r"(?i)\bsuccess|\binstalled\b|\bpassed\b|^ok\b|\bdone\b")
_CAUSE_LOOKAHEAD = 40  # lines after the block searched for its "Caused by:" chain
_RETRY_LOOKBACK = 30  # lines before the block searched for the retries that preceded it


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _tb_exception(lines: list[Line], start: int, hi: int) -> int | None:
    """The line of the exception that ends the Python traceback starting at ``start``: the first
    line after its frames at the traceback's own indentation (a traceback nested in another
    tool's output is indented as a whole)."""
    base = _indent(lines[start].text)
    for j in range(start + 1, hi):
        t = lines[j].text
        if _PY_FRAME.match(t):
            continue
        if t.strip() and _indent(t) <= base and not t.strip().startswith(("^", "~")):
            return j
    return None


_RUNTIME_WARNING = re.compile(r"^(?:[A-Z][A-Za-z]{1,20} )?Warning:\s")  # ``Warning: ...``, ``PHP Warning: ...``
_TOOL_ERROR = re.compile(r"^([a-z][\w.+-]{0,39}) error: \S")  # a tool's own error line (``zip error: ...``)
_TOOL_WARNING_LOOKBACK = 12  # lines above a tool's error line searched for its own warnings


# a member of a Python exception group's printout: the exception line ending one sub-exception's traceback, drawn
# inside the group's box (``    | ConnectionRefusedError: [Errno 111] Connect call failed``)
_GROUP_MEMBER = re.compile(r"^\s{0,40}\|\s?([A-Za-z_][\w.]{0,200}(?::\s.{0,2000}|$))")
_GROUP_LINES = 2000  # lines an exception group's box may take


def _group_members(lines: list[Line], start: int, hi: int) -> list[str]:
    """The exceptions an exception group holds (``ExceptionGroup: unhandled errors in a TaskGroup (2
    sub-exceptions)``), read from its box below ``start``: each sub-exception's own exception line. They are why the
    group was raised, so they are its causes (for the category only)."""
    found = []
    for j in range(start + 1, min(hi, start + _GROUP_LINES)):
        t = lines[j].text
        s = t.lstrip()
        if not s.startswith(("|", "+")):
            break
        m = _GROUP_MEMBER.match(t)
        if m and _EXC_NAME.search(m.group(1).split(":", 1)[0]) and not m.group(1).startswith("Traceback"):
            found.append(m.group(1).strip())
    return found


def _add_causes(ex: Excerpt, lines: list[Line], lo: int, hi: int, start: int, end: int) -> Excerpt:
    """What the failure itself names as its cause, read for the category only: the ``Caused by:``
    chain printed in or under it (cargo, Gradle, Java, Node's ``[cause]:``, anyhow's numbered
    chain), the exceptions of the chained Python traceback that ends at the decisive one (deepest
    last), and into ``retries`` a tool's retry status lines just before it, back to a success
    line (a fetch retried, then a consequence such as "no matching version"). Its own step only."""
    causes = []
    j = start + 1
    stop = min(hi, end + 1 + _CAUSE_LOOKAHEAD)
    while j < stop:
        m = _CAUSED_BY.match(lines[j].text)
        if m:
            said = m.group(1).strip()
            if said:
                causes.append(said)
            else:  # "Caused by:" alone: the causes follow, indented (anyhow numbers them, deepest last)
                for k in range(j + 1, min(hi, j + 12)):
                    t = lines[k].text
                    if not t.strip():
                        if causes and k > j + 1:
                            break
                        continue
                    if not t[:1].isspace():
                        break
                    causes.append(re.sub(r"^\s*\d{1,2}: ", "", t).strip())
        j += 1
    if "ExceptionGroup" in ex.message or "sub-exception" in ex.message:
        causes += _group_members(lines, start, hi)
    starts = [i for i in range(lo, start + 1) if _PY_TB_START.match(lines[i].text)]
    # walk back the chain that ends at the decisive traceback: between a link's exception and the next
    # traceback, only its detail lines and the "above exception" banner
    for a, b in reversed(list(zip(starts, starts[1:], strict=False))):
        at = _tb_exception(lines, a, b)
        between = [lines[k].text for k in range(at + 1, b) if lines[k].text.strip()] if at is not None else []
        if at is None or not between or not _PY_CHAIN.match(between[-1]) or len(between) > 8:
            break
        causes.insert(0, lines[at].text.strip())
    if ex.kind == "error-words" and not causes:
        # a script's own bare failure statement (``health check failed for <url>``) right under the runtime's
        # warning about what went wrong (PHP's ``Warning: file_get_contents(...): Failed to open stream:
        # Connection refused``): the warning says why; a warning is never the failure itself, so it is read as its
        # cause (for the category only)
        above = next((k for k in range(start - 1, max(lo, start - 3) - 1, -1) if lines[k].text.strip()), None)
        if above is not None and not lines[above].boundary and _RUNTIME_WARNING.search(lines[above].text):
            causes.append(lines[above].text.strip()[:1000])
        m = _TOOL_ERROR.match(lines[start].text.strip()) if not causes else None
        if m is not None:
            # a tool's own error line after its own warnings (``zip warning: name not matched: handler.py`` then
            # ``zip error: Nothing to do!``): the warnings say why it gave up, so they are read as its causes
            warned = m.group(1) + " warning: "
            for k in range(start - 1, max(lo, start - _TOOL_WARNING_LOOKBACK) - 1, -1):
                t = lines[k].text.strip()
                if t.startswith(warned):
                    causes.insert(0, t[:1000])
                elif t or lines[k].boundary:
                    break
    ex.causes = causes[-16:]
    retries: list[str] = []
    for k in range(start - 1, max(lo, start - _RETRY_LOOKBACK) - 1, -1):  # back to a success or the step's start
        t = lines[k].text.strip()
        if _RETRY.search(t):
            retries.insert(0, t[:1000])
        elif _SETTLED.search(t):
            break
    ex.retries = retries[-16:]
    return ex


_COMMAND_ECHO = re.compile(r"^(?:\+{1,4} |\$ |> |Run |\[command\])\s?(\S.{0,500})$")
_COMMAND_LOOKBACK = 30


def _step_command(lines: list[Line], lo: int, at: int) -> str | None:
    """The echoed command whose output holds the failure: the echo that opens its step (``+ go
    vet ./...``, ``$ cargo clippy``), else the nearest echo-looking line (``> eslint src``, an npm
    script's) in the lines before it."""
    if lo > 0 and _ECHO.match(lines[lo - 1].text.strip()):
        return lines[lo - 1].text.strip()[:500]
    for k in range(min(at, len(lines) - 1), max(-1, at - _COMMAND_LOOKBACK), -1):
        m = _COMMAND_ECHO.match(lines[k].text.strip())
        if m:
            return m.group(1)[:500]
    return None


def _step_start(lines: list[Line], i: int) -> int:
    """The first line of the step holding line ``i``: back to the boundary that opens it."""
    while i > 0 and not lines[i - 1].boundary:
        i -= 1
    return i


def _finish(ex: Excerpt, lines: list[Line], lo: int, hi: int) -> Excerpt:
    """The decisive block's causes, the command of its step, and the lines printed right above it."""
    start = lo
    if ex.lines is not None and lines:
        start, end = ex.lines[0] - lines[0].no, ex.lines[1] - lines[0].no
        if not ex.preamble and ex.kind != "python" and 0 <= start < len(lines):
            ex.preamble = _preamble(lines, lo, start)
        _add_causes(ex, lines, lo, hi, start, end)
    ex.command = _step_command(lines, lo, start)
    return ex


# the build says its warnings fail it (sphinx -W, -Werror builds that print so): a warning is then a failure
_TREATED = re.compile(r"(?i)\bwarnings? (?:are |were |being )?treated as errors?\b|\bWarning, treated as error")
_WARN_LINE = re.compile(r"(?i)^(?:\S{1,400}:\d{1,7}(?::\d{1,5})?:? )?warning\b[:\]]?")


_RUN_ECHO_LINES = 500  # lines a runner's echo of a step's script may take before its ``##[endgroup]``


def _run_echoes(lines: list[Line]) -> set[int]:
    """The lines of GitHub's echo of each step's script: between ``##[group]Run <command>`` and the
    ``##[endgroup]`` that closes it (the script, its ``shell:``, ``env:`` or an action's ``with:``), within
    ``_RUN_ECHO_LINES``. What the step will run (``! grep -q 'Failed' test.log``), never its output, so never its
    failure; a group that is not closed, or that the job's own output opens (not a ``Run`` group), is no echo."""
    echo: set[int] = set()
    for k, ln in enumerate(lines):
        if ln.annotation != "group" or not ln.text.startswith("Run "):
            continue
        for j in range(k + 1, min(len(lines), k + 1 + _RUN_ECHO_LINES)):
            if lines[j].annotation == "endgroup":
                echo.update(range(k + 1, j))
                break
            if lines[j].annotation == "group":
                break
    return echo


# Tcl's errorInfo under an error's message: ``    while executing`` (the command that raised it) or a context line in
# parentheses, then ``    invoked from within``, and so on up the stack
_TCL_TRACE = re.compile(r"^ {4}(?:while executing|invoked from within)$")
_TCL_CONTEXT = re.compile(r"^ {4}\([^\n]{1,300}\)$")


def _tcl_statements(lines: list[Line]) -> None:
    """The message Tcl prints above its errorInfo (``expected integer but got "12a"`` over ``    (reading increment)``
    and ``    invoked from within``; ``too many nested evaluations`` over ``    while executing``) is the failure's
    statement, whatever its words: Tcl's uncaught error, as a Python exception line over its traceback."""
    for k, ln in enumerate(lines):
        if "within" not in ln.text and "executing" not in ln.text:
            continue
        if not _TCL_TRACE.match(ln.text):
            continue
        j = k - 1
        if j > 0 and _TCL_CONTEXT.match(lines[j].text):
            j -= 1
        if j < 0 or _TCL_TRACE.match(lines[j].text) or _TCL_CONTEXT.match(lines[j].text) or lines[j].text[:1] in ' "\t':
            continue  # a deeper level of the trace (its quoted command, its context), not the message
        if k + 1 >= len(lines) or not lines[k + 1].text.startswith('"'):
            continue  # Tcl quotes the command the trace line names on the next line (``"incr total $count"``)
        said = lines[j].text.strip()
        if (
            said
            and not lines[j].boundary
            and lines[j].cls < 3
            and lines[j].level != "warning"
            and not _WARN_HEAD.match(said)
        ):
            lines[j].cls = 3


def _pick(lines: list[Line], baseline: Baseline | None = None, warnings_fail: bool = False) -> Excerpt | None:
    echo = _run_echoes(lines) if any(ln.annotation == "group" for ln in lines) else set()
    for k, ln in enumerate(lines):
        _classify(ln)
        if k in echo:
            ln.cls = 0
            ln.echoed = True
            continue
        if warnings_fail and ln.cls == 0 and _WARN_LINE.match(ln.text.strip()):
            ln.cls = 3
        if (
            ln.cls < 4
            and not ln.boundary
            and ln.level != "warning"
            and k + 1 < len(lines)
            and _ARROW.match(lines[k + 1].text)
            and ln.text.strip()
            and not _WARN_HEAD.match(ln.text.strip())
        ):
            ln.cls = 4  # the header of a diagnostic whose location follows on the next line
        if baseline is not None and ln.cls and baseline.seen(ln.text):
            ln.cls = 0  # the passing run printed it too: not the failure
    for k, ln in enumerate(lines):
        if ln.cls and "arn" in ln.text and _CLOSES_ON_WARNINGS.search(ln.text):
            _warnings_above(lines, k, baseline)
    _tcl_statements(lines)
    _structure(lines, baseline)
    specific = [i for i, ln in enumerate(lines) if ln.cls >= 2]
    if not specific:
        trailers = [i for i, ln in enumerate(lines) if ln.cls == 1]
        if not trailers:
            return None
        i = trailers[0]
        lo = _step_start(lines, i)
        said = _report_above(lines, lo, i, baseline)
        if said is not None:
            # the trailer (``make: *** [check] Error 66``) closes the report its command printed above it
            ex = Excerpt(message=_unframed(lines[said].text.strip()), kind="failure", level=lines[said].level)
            # (and what the trailer says of it, categorising only: ``collect2: error: ld returned 1 exit status``
            # says the report above it is the linker's)
            ex.detail = f"{_report_below(lines, said, i)}\n{lines[i].text.strip()}".strip()
            return _finish(_with_block(ex, lines, said, _detail_end(lines, said, i)), lines, lo, i + 1)
        ex = Excerpt(message=lines[i].text.strip(), kind="trailer", level=lines[i].level)
        return _finish(_with_block(ex, lines, i, i), lines, lo, i + 1)
    strong = [i for i in specific if lines[i].cls >= 3]
    last = (strong or specific)[-1]
    lo = _step_start(lines, last)
    hi = last + 1
    while hi < len(lines) and not lines[hi].boundary:
        hi += 1
    best = max(lines[i].cls for i in range(lo, hi))
    if best == 5:
        got = _python(lines, lo, hi) or _java(lines, lo, hi)
        if got is not None:
            return _finish(got, lines, lo, hi)
        i = next(i for i in range(lo, hi) if lines[i].cls == 5)
        if _PYTEST_E.match(lines[i].text):
            i = _past_cancellation(lines, i, hi)
            return _finish(_pytest(lines, i, hi), lines, lo, hi)
    i = next(i for i in range(lo, hi) if lines[i].cls == best)
    if _DEATH.search(lines[i].text.strip()) and not _KILLED_BY_DEADLINE.search(lines[i].text):
        # a process's death by a signal trails the message the process printed before dying, when it printed one
        said = next(
            (
                j
                for j in range(i - 1, max(lo, i - _DEATH_LOOKBACK) - 1, -1)
                if lines[j].cls >= 2 and not _DEATH.search(lines[j].text.strip())
            ),
            None,
        )
        if said is None:
            best = 3  # nothing said before it: the death is the statement, a failure with no further detail
        else:
            i, best = said, lines[said].cls
            if best == 5:
                got = _python(lines, lo, i + 1) or _java(lines, lo, i + 1)
                if got is not None:
                    return _finish(got, lines, lo, hi)
                if _PYTEST_E.match(lines[i].text):
                    return _finish(_pytest(lines, i, hi), lines, lo, hi)
    t = lines[i].text.strip()
    if t.startswith(("> ", "=> ")) and lines[i].cls == 5:
        # Gradle's cause marker (``> java.lang.OutOfMemoryError: ...`` under "What went wrong:"), the JUnit Platform
        # console's (``=> org.opentest4j.AssertionFailedError: ...`` under a failed test)
        t = t.split(" ", 1)[1]
    if _PANIC_AT_END.search(t):  # Rust >= 1.73 prints the panic's message on the line after its location
        nxt = next((lines[j].text.strip() for j in range(i + 1, min(hi, i + 4)) if lines[j].text.strip()), "")
        if nxt and not nxt.startswith(("note:", "stack backtrace:")):
            t = f"{t} {nxt}"
    above = _statement_above(lines, lo, i) if _BARE_LOCATION.match(t) else None
    if above is not None:
        # a bare location chosen, its statement a line or two above it (esbuild's ``✘ [ERROR] Could not resolve "x"``
        # then ``src/index.js:2:21:`` and the quoted source): one diagnostic, read from its statement
        ex = Excerpt(message=f"{t} {lines[above].text.strip()}", kind="diagnostic", level=lines[above].level)
        return _finish(_with_block(ex, lines, above, _detail_end(lines, i, hi)), lines, lo, hi)
    at = _location_above(lines, lo, i) if t.startswith(("Error: ", "Fatal Error: ")) else None
    if at is not None:
        # gfortran's ``src/heat.f90:10:28:`` (then the source line and its marker), then ``Error: ...``: one
        # diagnostic at that location
        ex = Excerpt(message=f"{lines[at].text.strip()} {t}", kind="diagnostic", level=lines[i].level)
        return _finish(_with_block(ex, lines, at, _detail_end(lines, i, hi)), lines, lo, hi)
    ex = Excerpt(
        message=t,
        exception=_exc_of(t) if _EXC.match(t) and ":" in t else _coded_exc(t),
        kind={5: "exception", 4: "diagnostic", 3: "failure", 2: "error-words", 1: "trailer"}[best],
        level=lines[i].level,
    )
    ex.detail = _indented_detail(lines, i, hi) or _named_earlier(lines, lo, i)
    if not ex.detail and best <= 3:
        ex.detail = _report_below(lines, i, hi)
    closing = lines[i].closed_by
    if closing is not None:  # what the closing line says of the warnings (``Compilation failed due to warnings``)
        ex.detail = f"{ex.detail}\n{lines[closing].text.strip()}".strip()
    return _finish(_with_block(ex, lines, i, _detail_end(lines, i, hi)), lines, lo, hi)


def _warnings_above(lines: list[Line], at: int, baseline: Baseline | None) -> None:
    """A closing line that says the warnings failed the build (``Aborted with 2 warnings in strict mode!``, ``cc1: all
    warnings being treated as errors``) points back at the warnings its step printed above it, whatever their form
    (a ``WARNING -`` tag, ``file:3: warning:``): they are failure statements."""
    for j in range(at - 1, max(-1, at - _POINT_BACK_LINES), -1):
        ln = lines[j]
        if ln.boundary:
            break
        if ln.cls or ln.annotation is not None or not ln.text.strip():
            continue
        if ln.level == "warning" or _WARN_FINDING.match(ln.text.strip()):
            if baseline is None or not baseline.seen(ln.text):
                ln.cls, ln.closed_by = 3, at


# a line framed by a symbol repeated on both sides (ssh's ``@    WARNING: UNPROTECTED PRIVATE KEY FILE!    @``, a
# ``*** ... ***`` or ``!! ... !!`` banner) whose words are all capitals: a banner shouting what went wrong
_BANNER = re.compile(r"^([@*#!|])\1{0,3}\s{1,40}([^a-z]{3,200}?[A-Z]{2}[^a-z]{0,200}?)\s{1,40}\1{1,4}$")


def _unframed(t: str) -> str:
    m = _BANNER.match(t)
    return m.group(2).strip() if m else t


# a check's verdict that it passed, after its separator (``name ... ok``, ``step: done``, ``- PASSED``, ``✓``): never the
# report of a failure (``GET /health = 503, want ok`` ends in ``ok`` and is one)
_SUCCEEDED = re.compile(
    r"(?i)(?:\.\.\.|\u2026|:|\s-|\[)\s{0,4}(?:ok|okay|passed|pass|done|success|successful|succeeded|finished)\]?[.!]?$|"
    r"[\u2713\u2714]$"
)
_COMPLAINT_NEAR = 3  # non-blank lines above a trailer among which the failing command's last complaint is looked for


def _report_above(lines: list[Line], lo: int, at: int, baseline: Baseline | None, near: bool = True) -> int | None:
    """The report a trailer closes, when nothing in its step states a failure, in a form the classes do not weigh: a
    program's complaint in its own words printed last before it (``sed: -e expression #1, char 40: unterminated `s'
    command``; among its last ``_COMPLAINT_NEAR`` non-blank lines: what a command printed earlier, ``remote:
    Enumerating objects: 5, done.``, is no complaint of the failing one), else the first ``WARNING:``-tagged report
    (a sanitizer's) or banner of the step. With ``near`` false (a log with no trailer either), the last complaint of
    the lines. None when there is no such line."""

    def quiet(ln: Line) -> bool:
        return bool(ln.cls or ln.boundary or ln.echoed or ln.annotation is not None) or (
            baseline is not None and baseline.seen(ln.text)
        )

    start = max(lo, at - _POINT_BACK_LINES)
    said = 0
    for j in range(at - 1, start - 1, -1):
        t = lines[j].text.strip()
        if not t:
            continue
        said += 1
        if near and said > _COMPLAINT_NEAR:
            break
        if quiet(lines[j]) or _SUCCEEDED.search(t):
            continue  # (a check that passed, ``smoke: health endpoint wired ... ok``, is no complaint of the failing one)
        if _complaint(t) or (said == 1 and lines[j].level == "log"):
            # (a date-stamped log line, the last thing printed before the trailer: what the program logged as it gave
            # up, Go's ``log.Fatal`` then ``exit status 1``)
            return j
    for j in range(start, at):
        ln = lines[j]
        t = ln.text.strip()
        if t and not quiet(ln) and (ln.level == "warning" or _BANNER.match(t)):
            return j
    return None


# a location alone on its line (``src/heat.f90:10:28:``): the header of a diagnostic whose message comes below
_BARE_LOCATION = re.compile(r"^[\w./\\~@+-]{1,400}\.\w{1,8}:\d{1,7}(?::\d{1,5})?:$")
_LOCATION_LOOKBACK = 6


def _location_above(lines: list[Line], lo: int, at: int) -> int | None:
    """The bare location line a few lines above ``at`` that the message at ``at`` belongs to: only the quoted
    source and its marker (not another statement) between them."""
    for j in range(at - 1, max(lo, at - _LOCATION_LOOKBACK) - 1, -1):
        t = lines[j].text.strip()
        if _BARE_LOCATION.match(t):
            return j
        if lines[j].cls or lines[j].boundary:
            return None
    return None


def _statement_above(lines: list[Line], lo: int, at: int) -> int | None:
    """The statement a bare location line at ``at`` belongs to, when it is printed above it (the nearest non-blank
    line of the same step, a few lines up, that states a failure and is no location itself); else None."""
    for j in range(at - 1, max(lo, at - _LOCATION_LOOKBACK) - 1, -1):
        ln = lines[j]
        if ln.boundary:
            return None
        t = ln.text.strip()
        if not t:
            continue
        return j if ln.cls >= 2 and not _BARE_LOCATION.match(t) else None
    return None


_TAP_NOT_OK = re.compile(r"^not ok \d{1,6}\s{0,3}-?\s{0,3}(\S.{0,300}?)\s*(?:#.{0,200})?$")


def _named_earlier(lines: list[Line], lo: int, at: int) -> str:
    """The detail of a failing test line that has none under it (TAP's ``not ok 2 - name``): the diagnostic
    printed earlier in its step that names the same test in quotes (a TAP producer writes its diagnostics
    to stderr, which a log shows before the test line), read for the category only."""
    m = _TAP_NOT_OK.match(lines[at].text.strip())
    if m is None:
        return ""
    name = m.group(1)
    quoted = (f"'{name}'", f'"{name}"')
    for j in range(at - 1, max(lo, at - 200) - 1, -1):
        if any(q in lines[j].text for q in quoted):
            return "\n".join(lines[k].text.strip() for k in range(j, min(at, j + MAX_BLOCK_LINES)))
    return ""


def _structure(lines: list[Line], baseline: Baseline | None) -> None:
    """What a line means by its place among its neighbours: a diff's ``+++`` header under its ``---``
    header is not a shell trace; a heading that announces failures (``There was 1 failure:``, pytest's
    ``FAILURES``) gives way to the first item it announces (``1) Test::name``, a ``___ test ___`` header) when
    the item's lines state nothing more specific;
    a count that closes a list of files at fault (``Code style issues found in 2 files``) makes the
    file names listed just before it the findings, whatever level tag they carry."""
    for k, ln in enumerate(lines):
        t = ln.text
        if not t or not (ln.cls or ln.boundary or _STRUCTURE_RX.search(t)):
            continue
        t = t.strip()
        if k and ("everity:" in t or "EVERITY:" in t) and _SEVERITY.match(t):
            # a finding's severity, printed under the finding it rates (bandit's ``>> Issue: [B602:...] ...`` then
            # ``Severity: High   Confidence: High``; npm audit's package line then ``Severity: high``): the line above
            # is a finding, a failure statement of the scan
            head = lines[k - 1]
            if (
                head.text.strip()
                and not head.boundary
                and not head.echoed
                and head.cls < 3
                and not _SEVERITY.match(head.text.strip())
            ):
                if baseline is None or not baseline.seen(head.text):
                    head.cls = 3
            continue
        if ln.boundary and t.startswith("+++ ") and k and lines[k - 1].text.lstrip().startswith("--- "):
            ln.boundary = False
            continue
        if ln.cls >= 2 and _POINTS_BELOW.search(" ".join(lines[j].text for j in range(k, min(len(lines), k + 3)))):
            # "Terraform encountered problems ..., described below", "[  FAILED  ] 1 test, listed below:": a pointer
            # to the failures that follow, as a trailer is
            ln.cls = 1
            continue
        if _ANNOUNCES.match(t):
            item = next((j for j in range(k + 1, min(len(lines), k + 4)) if lines[j].text.strip()), None)
            if item is not None and _ITEM.match(lines[item].text.strip()) and lines[item].cls < 3:
                ln.cls = min(ln.cls, 1)
                # the item's own lines may state the failure (RSpec's ``Failure/Error:``): then they are taken
                said = any(lines[j].cls >= 3 for j in range(item + 1, min(len(lines), item + MAX_BLOCK_LINES)))
                if not said and (baseline is None or not baseline.seen(lines[item].text)):
                    lines[item].cls = 3
            continue
        if _FILES_COUNT.search(t):
            ln.cls = 1
            tag = _TAG.match(t)  # the listed lines carry the count line's own tag (``[warn] src/a.js``)
            prefix = tag.group(0) if tag else ""
            j = k - 1
            while (
                j >= 0
                and k - j <= 200
                and lines[j].level == ln.level
                and lines[j].text.strip().startswith(prefix)
                and _FILE_NAME.match(lines[j].text.strip()[len(prefix) :].strip())
            ):
                if baseline is None or not baseline.seen(lines[j].text):
                    lines[j].cls = max(lines[j].cls, 3)
                j -= 1


def _past_cancellation(lines: list[Line], at: int, hi: int) -> int:
    """A pytest ``E`` block whose exception is a cancellation (``CancelledError``) that the next exception of
    the chain was raised from (``The above exception was the direct cause ...``) is how that failure works (a
    timeout cancels its task): the chained exception's ``E`` block is the failure. Any other chain keeps its root
    cause (a ``ConnectionRefusedError`` under the ``RuntimeError`` raised from it)."""
    if not _CANCELLATION.search(lines[at].text):
        return at
    for j in range(at + 1, hi):
        if _PY_CHAIN.match(lines[j].text):
            return next((k for k in range(j + 1, hi) if _PYTEST_E.match(lines[k].text)), at)
        if lines[j].cls == 5 and not _PYTEST_E.match(lines[j].text):
            break
    return at


def _indented_detail(lines: list[Line], at: int, hi: int, limit: int = 24) -> str:
    """The lines indented under a decisive line (a TAP/YAML or JUnit detail block), blank lines
    included, up to the next line at its own indentation: read for the category only."""
    base = len(lines[at].text) - len(lines[at].text.lstrip())
    out = []
    for j in range(at + 1, min(hi, at + 1 + limit)):
        t = lines[j].text
        if t.strip() and (len(t) - len(t.lstrip()) <= base or lines[j].boundary):
            break
        out.append(t.strip())
    return "\n".join(x for x in out if x)


_REPORT_LINES = 12


def _report_below(lines: list[Line], at: int, hi: int) -> str:
    """The report printed under a failure statement, across blank lines (tcltest's ``==== name FAILED``, then
    ``---- Result was:`` ... ``---- Result should have been``): the lines after it up to the next failure
    statement or step boundary, at most ``_REPORT_LINES``: read for the category only."""
    out = []
    for j in range(at + 1, min(hi, at + 1 + _REPORT_LINES)):
        if lines[j].cls or lines[j].boundary:
            break
        out.append(lines[j].text.strip())
    return "\n".join(x for x in out if x)


_STRONG_MARKERS = (
    "Traceback (most recent call last)",
    "Caused by: ",
    "BUILD FAILURE",
    "FAILURE: Build failed",
    "npm ERR!",
    "npm error",
    "error[",
    ": error:",
    "panicked at",
    "FAILED",
    "Exception in thread",
)


def _single(text: str) -> Excerpt:
    """A one-line message: the line itself, cleaned."""
    t, level, _ = _clean(text)
    t = t.strip()
    if _PYTEST_E.match(t):
        t = t[1:].strip()
    m = _EXC.match(t)
    exc = m.group(1).rsplit(".", 1)[-1] if m and m.group(2) is not None and _EXC_NAME.search(m.group(1)) else None
    kind = "diagnostic" if _DIGIT_COLON.search(t) and _C4_FOUND.found(t) and not _C4_NOT.search(t) else "message"
    return Excerpt(
        message=t, exception=exc, kind=kind, level=level, block=t[:MAX_BLOCK_CHARS], lines=(1, 1) if t else None
    )


_DIGIT_COLON = re.compile(r"[:(\[]\d|error")


class Baseline:
    """The lines of a passing run of the same job, normalised by ``key`` (the signer's masking):
    a line of the failing log that the passing log also printed is not the failure."""

    def __init__(self, text: str, key: Callable[[str], str]):
        self.key = key
        start = _window_start(text)
        self.keys = {key(ln.text) for ln in clean_lines(text[start:]) if ln.text.strip()}

    def seen(self, line: str) -> bool:
        return self.key(line) in self.keys


def extract(text: str, baseline: Baseline | None = None) -> Excerpt:
    """The decisive failure excerpt of raw error text (see the module docstring); with
    ``baseline``, lines a passing run of the same job also printed are not failures."""
    if "\n" not in text and len(text) <= 20_000 and baseline is None:
        return _single(text)
    start = _window_start(text)
    first_no = text.count("\n", 0, start) + 1 if start else 1
    lines = clean_lines(text[start:], first_no)
    ex = _pick(lines, baseline, warnings_fail=_TREATED.search(text, start) is not None)
    if (ex is None or ex.kind in ("trailer", "error-words")) and start:
        # nothing specific in the tail: look around the last strong marker of the earlier text
        at = max(text.rfind(mk, 0, start) for mk in _STRONG_MARKERS)
        if at >= 0:
            a = text.rfind("\n", 0, max(0, at - 20_000)) + 1
            b = text.find("\n", min(start, at + 50_000))
            b = start if b < 0 or b > start else b
            earlier = _pick(clean_lines(text[a:b], text.count("\n", 0, a) + 1), baseline)
            if earlier is not None and earlier.kind not in ("trailer", "error-words"):
                ex = earlier
    if ex is not None:
        return ex
    # no failure statement at all: a program's complaint in its own words or a banner, the first of them (what a script
    # printed before it is its own narration: ``bumping chart to 1.4.0``, then ``sed: ... unterminated `s' command``)
    said = _report_above(lines, 0, len(lines), baseline, near=False)
    if said is not None and (lines[said].level != "warning" or _BANNER.match(lines[said].text.strip())):
        ex = Excerpt(message=_unframed(lines[said].text.strip()), kind="failure", level=lines[said].level)
        ex.detail = _report_below(lines, said, len(lines))
        return _finish(
            _with_block(ex, lines, said, _detail_end(lines, said, len(lines))),
            lines,
            _step_start(lines, said),
            len(lines),
        )
    # nothing at all: the first non-blank line (a bare message) that is not an echoed command (what the log says it
    # ran is never what failed)
    for ln in lines:
        if ln.text.strip() and not _MARKUP.match(ln.text.strip()) and not _ECHO.match(ln.text.strip()):
            return _with_block(Excerpt(message=ln.text.strip()), [ln], 0, 0)
    for ln in lines:
        if ln.text.strip():
            return _with_block(Excerpt(message=ln.text.strip()), [ln], 0, 0)
    return Excerpt(message="")
