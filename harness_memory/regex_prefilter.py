"""Literal prefilters: run a costly regex only where the literals every match of it needs are in the text.

Python's ``re`` tries a long alternation at every position of a text; most texts signed hold none of the
words an alternative needs. ``Prefiltered(rx).found(text)`` gives ``bool(rx.search(text))`` (the same answer,
by construction: a match of ``a|b`` is a match of ``a`` or of ``b``, and a match of ``a`` contains every
literal ``required`` derives from ``a``'s parse). ``lower_case_twin`` turns a ``(?i)`` pattern into one for
lower-cased ASCII text, which ``re`` searches many times faster and which finds the same matches there.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Iterable
from typing import Any

try:  # CPython's own parser of patterns and its opcodes (private modules of ``re`` since 3.11)
    _C: Any = importlib.import_module("re._constants")
    _parser: Any = importlib.import_module("re._parser")
    _REPEATS: tuple[Any, ...] = (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.POSSESSIVE_REPEAT)
except (ImportError, AttributeError):  # another Python: no prefilter, every search is the plain one
    _C = _parser = None
    _REPEATS = ()

__all__ = ["required", "Prefiltered", "lower_case_twin", "literal_set_pattern"]


_MAX_SET = 64  # the most strings a run of literals may stand for (a product of small alternatives)


def _literals(items: Iterable) -> set[str] | None:
    """Every string a parsed piece can match, when that is a small finite set of literals (literals, classes of
    single characters, alternations and groups of such, optional parts: ``timed? ?out`` is ``timed out``,
    ``timedout``, ``time out`` or ``timeout``); None otherwise."""
    out = {""}
    for op, av in items:
        got: set[str] | None
        if op is _C.LITERAL:
            got = {chr(av)}
        elif op is _C.IN:
            got = {chr(a) for _, a in av} if len(av) <= 8 and all(o is _C.LITERAL for o, _ in av) else None
        elif op is _C.SUBPATTERN:
            got = None if av[1] & _C.SRE_FLAG_IGNORECASE else _literals(av[3])
        elif op is _C.BRANCH:
            got = set()
            for alt in av[1]:
                lits = _literals(alt)
                if lits is None:
                    return None
                got |= lits
        elif op in _REPEATS and av[1] == 1:  # ``x?`` or ``x{1}``
            got = _literals(av[2])
            if got is not None and av[0] == 0:
                got = got | {""}
        else:
            got = None
        if got is None:
            return None
        out = {a + b for a in out for b in got}
        if len(out) > _MAX_SET:
            return None
    return out


def literal_set_pattern(words: Iterable[str]) -> str:
    """A pattern matching exactly the strings of ``words``, written as their trie (``e(?:rror|xit)|fail``): each
    node's alternatives start with different characters, so ``re`` tries one of them where a flat alternation
    (``error|exit|fail``) tries them all at every position. It finds a match wherever the flat one does (the
    same set of strings); at a position where two words match it may take another one: for ``search`` as a
    test, not for the span it returns."""

    def node(suffixes: set[str]) -> str:
        by_first: dict[str, set[str]] = {}
        for w in suffixes:
            if w:
                by_first.setdefault(w[0], set()).add(w[1:])
        alts = [re.escape(ch) + node(rest) for ch, rest in sorted(by_first.items())]
        if not alts:
            return ""
        if len(alts) == 1 and "" not in suffixes:
            return alts[0]
        return "(?:" + "|".join(alts) + (")?" if "" in suffixes else ")")

    words = set(words)
    if not words or "" in words:
        raise ValueError("literal_set_pattern needs non-empty words")
    return node(words)


def _chance(either: Iterable[str]) -> float:
    """How likely a text holds one of these literals, were its characters drawn at random from 26: the anchor of an
    alternative is its least likely group (``lockfile`` or ``lock file`` rather than ``lock``)."""
    return sum(26.0 ** -len(lit) for lit in either)


def _minimal(strings: Iterable[str]) -> tuple[str, ...]:
    """``strings`` without those that contain another of them (where one is found, so is the one it contains)."""
    ordered = sorted(set(strings), key=lambda x: (len(x), x))
    out: list[str] = []
    for x in ordered:
        if not any(y in x for y in out):
            out.append(x)
    return tuple(out)


def required(items: Iterable) -> list[tuple[str, ...]]:
    """What every match of a parsed pattern (``re._parser``'s items) contains, as an AND of OR-groups
    of literal strings (``[("lock",), ("file",)]``: both ``lock`` and ``file``; ``[("401", "403")]``: one of
    them); ``[]`` when nothing is certain. Conservative: only runs of literal pieces (``_literals``) outside
    optional parts, inside repetitions of at least one and inside alternations every branch of which requires
    something."""
    out: list[tuple[str, ...]] = []
    run = {""}  # what the current run of literal pieces matched: one of these

    def flush() -> None:
        nonlocal run
        if min(map(len, run)) >= 1:
            out.append(_minimal(run))
        run = {""}

    for op, av in items:
        lits = _literals([(op, av)])
        if lits is not None:
            longer = {a + b for a in run for b in lits}
            if len(longer) > len(run) and min(map(len, run)) >= 1:
                out.append(_minimal(run))  # (a run of one string stays a filter of its own as it branches)
            if len(longer) > _MAX_SET:
                flush()
                longer = lits
            run = longer
            continue
        flush()
        if op is _C.SUBPATTERN:
            if not av[1] & _C.SRE_FLAG_IGNORECASE:
                out.extend(required(av[3]))
        elif op is _C.ATOMIC_GROUP:
            out.extend(required(av))
        elif op in _REPEATS:
            if av[0] >= 1:
                out.extend(required(av[2]))
        elif op is _C.BRANCH:
            either: list[str] = []
            for alt in av[1]:
                need = required(alt)
                if not need:
                    either = []
                    break
                either.extend(max(need, key=lambda g: min(map(len, g))))  # its most specific group
            if either:
                out.append(_minimal(either))
    flush()
    return out


def _top_level_branches(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|`` (outside groups, classes and escapes)."""
    out, depth, i, start, n = [], 0, 0, 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":  # a class: ``]`` right after ``[`` or ``[^`` is a literal
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


_CANARY = (
    "error: (?:timed? ?out|refused)[0-9]+ x?yz",
    [
        ("error: ",),
        ("error: refused", "error: timeout", "error: time out", "error: timedout", "error: timed out"),
        (" ",),
        (" yz", " xyz"),
    ],
)


@functools.cache
def _parser_understood() -> bool:
    """Whether this Python's pattern parser gives the trees ``required`` reads (checked once on a pattern whose
    literals are known): a parser that changed its shapes turns the prefilters off rather than wrong."""
    if _parser is None:
        return False
    try:
        got = required(_parser.parse(_CANARY[0], 0))
    except (AttributeError, IndexError, TypeError, ValueError, re.error):
        return False
    return sorted(map(sorted, got)) == sorted(map(sorted, _CANARY[1]))


class Prefiltered:
    """``found(text)``: whether ``rx.search(text)`` finds a match, the same answer, faster: each top-level
    alternative of ``rx`` is searched on its own, and only where the literals it needs (``required``) are
    in the text (a match of ``a|b`` is a match of ``a`` or of ``b``). A pattern with back-references or
    global flags other than ``rx``'s stays one search."""

    def __init__(self, rx: re.Pattern[str]):
        self.rx = rx
        self.anchor: re.Pattern[str] | None = None
        if not _parser_understood():
            self.parts: list[tuple[re.Pattern[str], list[tuple[str, ...]]]] = [(rx, [])]
            return
        pieces = _top_level_branches(rx.pattern)
        if "|".join(pieces) != rx.pattern or any(re.search(r"\\\d|\(\?P=|\(\?\(", p) for p in pieces):
            pieces = [rx.pattern]
        parts: list[tuple[re.Pattern[str], list[tuple[str, ...]]]] = []
        for piece in pieces:
            try:
                compiled: re.Pattern[str] | None = re.compile(piece, rx.flags)
                parsed = _parser.parse(piece, rx.flags)
            except re.error:  # a split this scanner got wrong: one search, no filter
                compiled = parsed = None
            if compiled is None or compiled.flags != rx.flags or parsed.state.flags & _C.SRE_FLAG_IGNORECASE:
                parts = [(rx, [])]
                break
            parts.append((compiled, required(parsed)))
        self.parts = parts
        # one search (a trie) for one group of literals of every alternative (its least likely: _chance): where
        # none of them is there, no alternative can match
        if all(need for _, need in parts):
            lits = _minimal({lit for _, need in parts for lit in min(need, key=_chance)})
            self.anchor = re.compile(literal_set_pattern(lits))

    # (subn, possible and found each loop over the parts' literals inline: one generator of the live parts shared by
    # the three cost 8-12% of whole-signing CPU in an A/B on 3,000 loghub lines, 2026-11-27 04:00 UTC)
    def subn(self, repl: str | Callable[[re.Match[str]], str], text: str) -> tuple[str, int]:
        """``rx.subn(repl, text)``, the same result: where only one alternative can match anywhere in ``text``
        it alone is used (at every position the alternation finds what it finds), where none can, ``text``."""
        if self.anchor is not None and self.anchor.search(text) is None:
            return text, 0
        live = None
        for rx, need in self.parts:
            for either in need:
                for lit in either:
                    if lit in text:
                        break
                else:
                    break
            else:
                if live is not None:
                    return self.rx.subn(repl, text)  # two or more can: the whole alternation
                live = rx
        return (text, 0) if live is None else live.subn(repl, text)

    def possible(self, text: str) -> bool:
        """Whether the literals of at least one alternative are in ``text`` (else ``rx`` cannot match)."""
        if self.anchor is not None and self.anchor.search(text) is None:
            return False
        for _, need in self.parts:
            for either in need:
                for lit in either:
                    if lit in text:
                        break
                else:
                    break
            else:
                return True
        return False

    def search(self, text: str) -> re.Match[str] | None:
        """``rx.search(text)`` itself (the same match), skipped where no alternative is possible."""
        return self.rx.search(text) if self.possible(text) else None

    def found(self, text: str) -> bool:
        if self.anchor is not None and self.anchor.search(text) is None:
            return False
        for rx, need in self.parts:
            for either in need:
                for lit in either:
                    if lit in text:
                        break
                else:
                    break  # a literal this alternative needs is not there
            else:
                if rx.search(text):
                    return True
        return False


def lower_case_twin(rx: re.Pattern[str]) -> re.Pattern[str] | None:
    """For a pattern that is ``(?i)`` and nothing else, the same pattern for lower-cased ASCII text (on ASCII
    text the two find the same matches: ``re`` folds case by simple lower-casing there, much slower); None
    when that cannot be told from its source (an escape that names characters, a class range)."""
    pat = rx.pattern
    if (
        not pat.startswith("(?i)")
        or rx.flags & ~(re.IGNORECASE | re.UNICODE)
        or re.search(r"\\(?![bsdw.()|?*+])|-|\(\?", pat[4:])
    ):
        return None
    return re.compile(pat[4:].lower())
