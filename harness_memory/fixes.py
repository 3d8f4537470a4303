"""Error→fix links: what fixed which error, with the evidence, and advice ranked by it.

A *fix* is a memory (usually a ``success``) linked to every error signature it was taught
for (``fix_links``): per link, how often it worked, how often it did not, and the ``apply()``
credits given for that error. Fixes of the same *kind* (the fix text masked the way error
messages are, so ``bin/test a/test_x.py`` and ``bin/test b/test_y.py`` are one kind)
aggregate: their evidence adds up and the newest variant stands for them.

Ranking (``rank``): the candidates are the fixes linked to the error's own signature, to a
signature the template miner linked to it, a kind that fixed the same *task* (the failed task's
signature on the link) for at least ``Settings.fix_task_min`` distinct errors (level ``task``, after
the error's own links), a kind that fixed at least ``Settings.fix_origin_min`` distinct errors whose
runs started in the same place (``ErrorSignature.origin``, the outermost application frame of the
stack trace: the same script or test class; level ``origin``, after the task's), or to an error whose excerpt is nearly
the same text (``Settings.fix_similar_min``, word-set Jaccard of the decisive line and key frame, or of the failure
block, found through full-text indexes of the linked errors' lines and blocks, their rarest words only; level
``similar``) when the fix carried over between errors: its kind worked for at
least ``Settings.fix_similar_breadth`` distinct signatures (``_broad``: a re-run or a reinstall, not a one-bug patch), or
— opt-in,
``Settings.fix_general_min`` — a kind that fixed at least that many distinct errors of the
error's category (a general remedy: a retry that fixed five different network errors); an
error unlike any linked one, in a task and from an origin not repaired that often, gets no advice.
Exact signature before alias before task before origin before similar before general, and within a level a fix taught for the same
task first; then the net evidence (worked − did not work + helpful − unhelpful credits on
the link, weighted by similarity, plus a quarter of the memory's ``apply()`` credits for any
error); the closest taught instance of the error (word overlap of the decisive lines) and then
recency break ties. A credit reaches the link when ``apply()`` names the error or the
task an ``on_task_error`` advice was given for, so a fix that did not help an error stops being
offered for it; and a kind whose credits in the asked task net negative (against the times it was
taught as working for that task) is not offered to that task again, whatever it earned elsewhere
(``_refuted_here``: the same useless retry is not advised twice). A credit is evidence where it was given
(``_local_evidence``): asked from an origin where a kind was taught, that kind's links leave out the credits
given for errors of other origins. Two opt-in rules read the error's values
(off by default, measured in docs/fixes.md, "The same error again"): ``Settings.fix_recurrence`` offers a fix whose
taught error had the asked decisive line and key frame word for word (values included) even where the signature's
other evidence withholds it, and ``Settings.fix_once_same_values`` offers a fix backed only once for those values
only. The nearest instance (docs/fixes.md, "The nearest instance"): a signature judged unpredictive still gives the
fix whose taught error is clearly the nearest to the asked one (``Settings.fix_nearest_min``, ``fix_nearest_margin``:
character trigrams of the decisive lines, ``line_grams``), and a fix backed once is offered only for an error whose
decisive line is like the one it fixed (``Settings.fix_once_similar_min``). An unhelpful credit is evidence about the
instance it was given for (``_instance_evidence``, ``Settings.fix_instance_credits``): asked from an error whose decisive
line (or, where the lines are alike, failure block) is clearly nearer the one the fix worked for than the refuted one's,
the credit is left out. Text
similarity between a fix and the error plays no part: words shared with the error are not
evidence that the fix works (the errors' lines are compared with each other, within a link's signature).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from .error_signatures import WILDCARD
from .models import MEMORY_COLUMNS, Memory, row_to_memory

if TYPE_CHECKING:  # pragma: no cover
    from .core import Core
    from .error_signatures import ErrorSignature

__all__ = ["FixEvidence", "fix_kind", "link_text", "instance_line", "instance_text", "link", "credit", "rank"]


_TARGET = re.compile(r"^[\w@.+~-]*\w\.[A-Za-z][A-Za-z0-9]{0,5}$|^[a-z_][\w]*(?:\.[a-z_]\w*){1,}$|[\\/]|://|^[\"'`]")


_PATHLIKE = re.compile(
    r"[\\/]|\.(?:py|pyi|ipynb|js|mjs|cjs|ts|tsx|jsx|sh|bash|zsh|ps1|c|cc|cpp|cxx|h|hh|hpp|go|rs|java|kt|kts|"
    r"scala|rb|php|pl|pm|swift|cs|fs|lua|r|jl|ex|exs|erl|hs|ml|dart|sql)$"
)


_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'")
_CD = re.compile(r"^cd\s+\S+\s*(?:&&|;)\s*")
# output plumbing: `2>&1`, `> /dev/null`, standard error to a file, output to a log file (`>> run.log`);
# output to any other file stays (`echo "numpy<2" > constraints.txt` is the fix, not its log)
_REDIRECT = re.compile(
    r"(?:^|\s)(?:(?:\d|&)?>>?&\d|(?:\d|&)?>>?\s*/dev/null|2>>?\s*[^\s|;&]+"
    r"|(?:1|&)?>>?\s*[^\s|;&]+\.(?:log|out|err))(?=\s|$|;|\|)"
)
_FILTER = re.compile(
    r"\s*(?<!\|)\|(?!\|)&?\s*(?:head|tail|grep|egrep|fgrep|rg|less|more|cat|tee|sort|uniq|wc|cut|column|nl)\b[^|]*$"
)


# the unversioned names of one interpreter (`python3 x.py` is `python x.py`; `python3.11` stays)
_INTERPRETER = re.compile(r"(?:(?<=^)|(?<=&& )|(?<=; ))(python|pip)3(?=\s|$)")


def command_core(text: str) -> str:
    """A one-line shell command without its output plumbing: a leading ``cd DIR &&``, output
    redirections (``2>&1``, ``> /dev/null``, ``2> err.txt``, ``>> run.log``) and trailing output filters
    (``| head -50``, ``| grep FAIL``, ``| tee log``); ``python3``/``pip3`` are ``python``/``pip``
    (a versioned ``python3.11`` stays). What the command does is kept: its program,
    arguments, environment assignments, wrappers and input. Text of more than one line (a script,
    prose) is returned unchanged, as is text inside quotes."""
    t = text.strip()
    if "\n" in t or len(t) > 2000:
        return text
    quoted: list[str] = []

    def hide(m: re.Match[str]) -> str:
        quoted.append(m.group(0))
        return f"\x00{len(quoted) - 1}\x00"

    t = _QUOTED.sub(hide, t)
    while _CD.match(t):
        t = _CD.sub("", t, count=1)
    t = _REDIRECT.sub("", t)
    while True:
        cut = _FILTER.sub("", t)
        if cut == t:
            break
        t = cut
    t = _INTERPRETER.sub(r"\1", " ".join(t.split()))
    t = re.sub("\x00(\\d+)\x00", lambda m: quoted[int(m.group(1))], t)
    return t or text


def fix_kind(text: str) -> str:
    """The kind of a fix: its words with its targets masked (paths, file names, dotted modules,
    URLs, quoted strings), then hashed: ``bin/test a/test_x.py`` and ``bin/test b/test_y.py`` are
    one kind. A one-line command is compared without its output plumbing (``command_core``:
    ``cd /repo && pytest a.py 2>&1 | tail -20`` is ``pytest a.py``). Numbers and names with digits
    stay (``patch LANG-12`` and ``patch LANG-40``, or ``foo==1.2`` and ``foo==2.0``, are different
    fixes)."""
    tokens = [WILDCARD if _TARGET.search(t) else t for t in " ".join(command_core(text).split())[:4000].split()]
    return "fix_" + hashlib.sha256(" ".join(tokens).encode()).hexdigest()[:16]


def link_text(signed: ErrorSignature) -> str:
    """What a link keeps of its error, and what similar errors are compared by: the decisive
    line and its key frame."""
    return (signed.message or signed.excerpt) + (f" (at {signed.frame})" if signed.frame else "")


def bound_params(fix: str, params: list[str]) -> list[str]:
    """The variable parts of an error that a fix names (``pip install pyyaml`` for ``No module
    named 'yaml'``): such a fix applies to errors with those values only. A target the fix acts
    on (a path or file name: ``black src/a.py`` for ``would reformat src/a.py``) is not bound:
    the fix's kind already stands for it with any target (``fix_kind``)."""
    low = fix.lower()
    out = []
    for p in params:
        p = p.strip("\"'`<>").lower()
        if _PATHLIKE.search(p):
            continue  # a path or a source file (a package name, such as ruamel.yaml, stays bound)
        if len(p) >= 3 and not p.replace(".", "").isdigit() and p in low and p not in out:
            out.append(p)
    return out[:8]


class FixEvidence(BaseModel):
    """One fix offered for an error, with the evidence that ranked it."""

    memory: Memory = Field(description="the newest variant of the fix kind linked to this error")
    kind: str
    level: str = Field(
        description="exact: linked to this signature; alias: to a signature linked to it; "
        "task: fixed the same task (its signature) for other errors (Settings.fix_task_min); "
        "origin: fixed other errors whose runs started in the same place (ErrorSignature.origin, Settings.fix_origin_min); "
        "similar: to an error whose excerpt is nearly the same text (a kind that worked for several distinct errors, "
        "Settings.fix_similar_breadth); general: the kind fixed several distinct "
        "errors of this error's category (opt-in, Settings.fix_general_min)"
    )
    similarity: float = Field(
        1.0,
        description="word-set Jaccard of the linked error's excerpt (1 for exact/alias; for task, origin and "
        "general, the weight of same-task, same-origin or category-level evidence)",
    )
    worked: int = Field(description="times a fix of this kind was taught as fixing this error")
    failed: int = Field(description="times it was taught as not fixing it")
    helpful: int = Field(description="apply() credits: helpful (this kind, any error)")
    unhelpful: int = Field(description="apply() credits: not helpful")
    variants: int = Field(description="distinct fix texts of this kind")
    score: float

    def explain(self) -> str:
        near = f" (similarity {self.similarity:.2f})" if self.level == "similar" else ""
        match = {
            "general": "same error category",
            "task": "same task, other errors",
            "origin": "same origin (where the failing run started), other errors",
        }.get(self.level, f"{self.level} signature match{near}")
        return (
            f"{match}; worked {self.worked}x, did not work {self.failed}x; "
            f"credits +{self.helpful}/-{self.unhelpful}; {self.variants} variant(s) of this fix; "
            f"score {self.score:.2f}"
        )


def link(
    core: Core,
    memory_id: int,
    signature: str,
    category: str | None,
    excerpt: str | None,
    *,
    worked: bool,
    now: float,
    bound: list[str] | None = None,
    task_signature: str | None = None,
    origin: str | None = None,
    instance: str | None = None,
) -> None:
    """Add one worked / did-not-work observation to a link (caller holds the write transaction);
    ``task_signature``: the task the fix was taught for, ``origin``: where its error's run started
    (``ErrorSignature.origin``; the latest ones given stay on the link), ``instance``: the error's failure block
    (``instance_text``; the first one given stays, as the decisive line does)."""
    core.backend.conn.execute(
        "INSERT INTO fix_links(memory_id, error_signature, error_category, error_message, worked, failed, first_at, "
        "last_at, bound_params, task_signature, error_origin, error_instance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(memory_id, error_signature) DO UPDATE "
        "SET worked = fix_links.worked + excluded.worked, failed = fix_links.failed + excluded.failed, "
        "last_at = excluded.last_at, error_category = COALESCE(fix_links.error_category, excluded.error_category), "
        "bound_params = COALESCE(excluded.bound_params, fix_links.bound_params), "
        "task_signature = COALESCE(excluded.task_signature, fix_links.task_signature), "
        "error_origin = COALESCE(excluded.error_origin, fix_links.error_origin), "
        "error_instance = COALESCE(fix_links.error_instance, excluded.error_instance)",
        (
            memory_id,
            signature,
            category,
            excerpt[:2000] if excerpt else None,
            int(worked),
            int(not worked),
            now,
            now,
            json.dumps(bound) if bound else None,
            task_signature,
            origin,
            instance,
        ),
    )


def credit(
    core: Core,
    memory_id: int,
    signature: str,
    aliases: list[str],
    category: str | None,
    helpful: bool,
    now: float,
    task_signature: str | None = None,
    origin: str | None = None,
) -> None:
    """An apply() credit on the link of ``memory_id`` to this error (or an alias of it); a fix
    credited for an error it was never linked to (shown as a similar error's, the same task's or the
    same origin's fix) gets a link of its own carrying the credit, the task it was advised for and its
    error's origin, so the credit moves the task- and origin-level ranking too (caller holds the write
    transaction)."""
    col = "helpful" if helpful else "unhelpful"
    ph = ",".join("?" * len(aliases))
    cur = core.backend.conn.execute(
        f"UPDATE fix_links SET {col} = {col} + 1, last_at = ? WHERE memory_id = ? AND error_signature IN ({ph})",
        (now, memory_id, *aliases),
    )
    if cur.rowcount == 0:
        core.backend.conn.execute(
            f"INSERT INTO fix_links(memory_id, error_signature, error_category, {col}, first_at, last_at, "
            "task_signature, error_origin) VALUES (?, ?, ?, 1, ?, ?, ?, ?)",
            (memory_id, signature, category, now, now, task_signature, origin),
        )


SIMILAR_ALONE = 0.8  # below this, a fix found only through similar errors needs two of them agreeing
SIMILAR_CANDIDATES = 50
GENERAL_WEIGHT = 0.25  # weight of a category-level link's evidence, against 1 for the error's own links
SIMILAR_MIN_WORDS = 4  # a line of fewer words (a bare exception name) is too short to call two errors similar
MEMORY_CREDIT = 0.25  # weight of a memory's credits for any error, beside its credits on this error's link
TASK_WEIGHT = 0.5  # weight of a same-task link's evidence (the error differs), against 1 for the error's own links
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,60}")


@lru_cache(maxsize=4096)
def words(text: str) -> frozenset[str]:
    """The word set of an error excerpt (lower-cased identifiers and words; numbers dropped). Cached: the same linked
    errors come back as candidates of one search after another."""
    return frozenset(w.lower() for w in _WORD.findall(text[:4000]))


_AT_FRAME = re.compile(r" \(at [^\s()]+\)$")


def line_grams(text: str) -> set[str]:
    """The character trigrams of an error's decisive line (``link_text`` without the key frame it appends), whitespace
    folded: how two instances of one signature are compared (``rank``: the nearest taught instance, the once-backed
    fix). Characters, not words: the values a signature masks are mostly numbers, punctuation and short tokens (an
    expected value, a quoted snippet of code), which a word set drops."""
    return instance_grams(_fold_line(text))


def _fold_line(text: str) -> str:
    """A decisive line (or a link's ``link_text``: its key frame dropped), whitespace folded, of its first 2,000
    characters."""
    return _AT_FRAME.sub("", " ".join(text[:2000].split()))


INSTANCE_CHARS = 500  # what a link, an advice and a credit keep of their error's failure block


def _folded_line(text: str) -> str:
    """``_fold_line``, its first ``INSTANCE_CHARS`` characters (as instances keep it)."""
    return _fold_line(text)[:INSTANCE_CHARS]


def instance_line(signed: ErrorSignature) -> str:
    """An error's decisive line as a link compares it (``link_text`` without the key frame), whitespace folded, its
    first ``INSTANCE_CHARS`` characters."""
    return _folded_line(signed.message or signed.excerpt)


def instance_text(signed: ErrorSignature) -> str:
    """Which instance of its signature an error is, as a fix's link, an advice and the credits given after it keep it:
    its failure block (``ErrorSignature.excerpt``: the decisive line with its few lines of detail, a stack trace's
    frames), whitespace folded, its first ``INSTANCE_CHARS`` characters. Two failures of one signature differ there
    in their values and in where they happened (the frames' methods and line numbers); the same failure again does
    not."""
    return " ".join(signed.excerpt[:2000].split())[:INSTANCE_CHARS]


def instance_grams(text: str) -> set[str]:
    """The character trigrams of an ``instance_text``."""
    return {text[i : i + 3] for i in range(len(text) - 2)}


def _jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _kind_key(r: Any) -> str:
    """The kind a link row's fix belongs to (``rank``'s columns): its fix kind, or the memory itself."""
    return r[6] or f"memory_{r[1]}"


def _refuted_here(core: Core, rows: list[Any], task_signature: str | None, taught_here: dict[str, int]) -> set[str]:
    """The kinds among ``rows`` whose evidence on this very task is negative: ``apply()`` credits given after
    advices of the task (the access log keeps the advice's task on each credit) net of the times the kind was
    taught as working or failing for the task. Such a kind was offered here and did not help: offering it to
    the task again is the useless retry a memory is for avoiding; other tasks still get it, and a helpful
    credit in the task brings it back."""
    if task_signature is None:
        return set()
    kind_of = {r[1]: _kind_key(r) for r in rows}
    verdict = dict(taught_here)
    for mid, net in core.backend.execute(
        "SELECT memory_id, SUM(CASE WHEN was_helpful = 1 THEN 1 ELSE -1 END) FROM memory_access_log "
        "WHERE access_type = 'applied' AND task_signature = ? AND was_helpful IS NOT NULL "
        f"AND memory_id IN ({','.join('?' * len(kind_of))}) GROUP BY memory_id",
        (task_signature, *kind_of),
    ).fetchall():
        verdict[kind_of[mid]] = verdict.get(kind_of[mid], 0) + int(net)
    return {kind for kind, n in verdict.items() if n < 0}


def _local_kinds(rows: list[Any], origin: str | None) -> set[str]:
    """The kinds among ``rows`` taught (worked or did not work) for an error of the asked error's origin."""
    return {_kind_key(r) for r in rows if origin is not None and r[14] == origin and r[3] + r[4] > 0}


def _instance_evidence(
    core: Core,
    rows: list[Any],
    asked: tuple[set[str], set[str]],
    origin: str | None,
    aliases: list[str],
    margin: float,
) -> list[Any]:
    """The error's own links (``rank``'s rows) without the unhelpful credits given for another instance of the signature.

    One signature is shared by unrelated failures (an assertion whose values are masked, a message raised in several
    places). A fix shown for one of them and credited as unhelpful was refuted for errors like that one. ``asked``: the
    asked error's decisive line and failure block as trigram sets (``instance_grams`` of ``instance_line`` and
    ``instance_text``). A credit is left out of all the fix memory's links here (credits count on every link of their
    memory in the group, as ``credit()`` adds them) when the asked line is nearer (Jaccard) to a line the fix was
    taught as working for than to the line the credit was given for, by more than ``margin``
    (``Settings.fix_nearest_margin``); and when the lines say nothing (within ``margin`` of each other: the same
    message, as often), when the asked block is that much nearer to the block the fix was taught for than to the
    credit's (the frames' methods and line numbers tell the same failure again from another one of the same message).
    Credits and links written without them (before migration 0026, or a credit given with no error), and credits
    ``_local_evidence`` already left out (given in another origin to a kind taught in the asked one), count as before."""
    asked_line, asked_block = asked
    if not asked_line:
        return rows
    taught: dict[int, tuple[float, float]] = {}  # per fix memory: the nearest line and block it worked for
    for r in rows:
        if r[3] > 0 and r[12]:
            line = _jaccard(asked_line, instance_grams(_folded_line(r[12])))
            block = _jaccard(asked_block, instance_grams(r[15])) if r[15] else -1.0
            had = taught.get(r[1], (0.0, -1.0))
            taught[r[1]] = (max(had[0], line), max(had[1], block))
    mids = sorted(mid for mid in taught if any(r[1] == mid and r[11] > 0 for r in rows))
    if not mids:
        return rows
    local = _local_kinds(rows, origin)
    kind_of = {r[1]: _kind_key(r) for r in rows}
    away: dict[int, int] = defaultdict(int)
    for mid, line, block, credit_origin in core.backend.execute(
        "SELECT memory_id, error_line, error_instance, error_origin FROM memory_access_log WHERE access_type = 'applied' "
        f"AND was_helpful = 0 AND memory_id IN ({','.join('?' * len(mids))}) "
        f"AND error_signature IN ({','.join('?' * len(aliases))}) AND error_line IS NOT NULL",
        (*mids, *aliases),
    ).fetchall():
        if kind_of[mid] in local and credit_origin is not None and credit_origin != origin:
            continue  # left out by _local_evidence already
        by_line = taught[mid][0] - _jaccard(asked_line, instance_grams(line))
        if by_line > margin or (
            abs(by_line) <= margin
            and block
            and taught[mid][1] >= 0
            and taught[mid][1] - _jaccard(asked_block, instance_grams(block)) > margin
        ):
            away[mid] += 1
    if not away:
        return rows
    return [(*r[:11], max(0, r[11] - away[r[1]]), *r[12:]) if r[1] in away else r for r in rows]


def _local_evidence(core: Core, rows: list[Any], origin: str | None, aliases: list[str]) -> list[Any]:
    """The error's own links (``rank``'s rows) with their evidence as seen where the asked error's run started.

    A kind taught for an error of the asked error's origin (the same script or test class) keeps that evidence
    against what other origins said: the ``apply()`` credits given for errors of the signature whose runs started
    elsewhere are left out of all its links, every variant's (both ways), and a link that only such a credit made (no
    worked / did not work of its own) is dropped. A link keeps the origin it was last taught in: a kind taught in two
    origins is local to its links' latest ones. A fix offered for another test class's failure of the same message and refuted
    there is still the fix of its own test class's failure. Kinds never taught in the asked origin, and credits
    logged before their origin was (NULL), count as before."""
    if origin is None or not rows:
        return rows
    local = _local_kinds(rows, origin)
    if not local:
        return rows
    mids = sorted({r[1] for r in rows if _kind_key(r) in local})  # every variant of a local kind
    away: dict[int, tuple[int, int]] = {}
    for mid, helpful, unhelpful in core.backend.execute(
        "SELECT memory_id, SUM(CASE WHEN was_helpful = 1 THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN was_helpful = 0 THEN 1 ELSE 0 END) FROM memory_access_log "
        f"WHERE access_type = 'applied' AND memory_id IN ({','.join('?' * len(mids))}) "
        f"AND error_signature IN ({','.join('?' * len(aliases))}) AND error_origin IS NOT NULL AND error_origin != ? "
        "GROUP BY memory_id",
        (*mids, *aliases, origin),
    ).fetchall():
        away[mid] = (int(helpful), int(unhelpful))
    kept = []
    for r in rows:
        if _kind_key(r) in local:
            if r[14] != origin and r[3] + r[4] == 0 and r[14] is not None:
                continue  # a link made by a credit given elsewhere
            if r[1] in away:  # (each credit counted on every link of its memory in the group: as credit() adds it)
                h, u = away[r[1]]
                r = (*r[:10], max(0, r[10] - h), max(0, r[11] - u), *r[12:])
        kept.append(r)
    return kept


def _nearest_kind(rows: list[Any], asked: set[str], least: float | None, margin: float) -> str | None:
    """The kind among ``rows`` (``rank``'s columns) whose taught error (a link that worked) is the nearest to the asked
    one (``line_grams`` Jaccard), when it is at least ``least`` and ahead of every other kind's nearest by ``margin``;
    else None. A signature shared by unrelated failures (``fix_distinct_min``) says nothing about which fix comes next,
    but an instance of it that is clearly one of the taught instances again is that instance's failure."""
    if least is None or not asked:
        return None
    best: dict[str, float] = defaultdict(float)
    for r in rows:
        if r[3] > 0:
            best[_kind_key(r)] = max(best[_kind_key(r)], _jaccard(asked, line_grams(r[12] or "")))
    if not best:
        return None
    top = sorted(best.items(), key=lambda kv: -kv[1])
    runner_up = top[1][1] if len(top) > 1 else 0.0
    return top[0][0] if top[0][1] >= least and top[0][1] - runner_up >= margin else None


SEARCH_TERMS = 64  # words of an asked error a full-text search for similar linked errors is given


def _search_terms(asked: AbstractSet[str]) -> list[str]:
    """The words a full-text search for errors like the asked one is given: all of them up to ``SEARCH_TERMS``, else
    the longest (a long word names something: a test, a function, a module; short ones are the language's)."""
    if len(asked) <= SEARCH_TERMS:
        return sorted(asked)
    return sorted(sorted(asked, key=lambda w: (-len(w), w))[:SEARCH_TERMS])


_GROUP = "COALESCE(s.canonical, l.error_signature)"  # a link's error as its group (signatures the miner linked: one)


def _broad(core: Core, rows: list[Any], least: int | None, where: str, wparams: tuple[Any, ...]) -> list[Any]:
    """The link rows (``rank``'s columns) whose fix kind worked for at least ``least`` distinct errors (signature groups:
    two signatures the template miner linked are one error) among the visible memories (``where``): a fix that carried
    over from one error to another. A fix known for fewer (a
    patch of one bug, taught for its one or two failures) is kept to its own errors' links: an error that only looks
    like one of them is, as often as not, another bug. ``None``: every row."""
    if least is None or not rows:
        return rows
    keys = sorted({_kind_key(r) for r in rows})
    kinds = [k for k in keys if not k.startswith("memory_")]
    mids = [int(k[len("memory_") :]) for k in keys if k.startswith("memory_")]
    breadth: dict[str, int] = {}
    if kinds:
        for kind, n in core.backend.execute(
            f"SELECT m.fix_kind, COUNT(DISTINCT {_GROUP}) FROM fix_links l JOIN memories m ON m.id = l.memory_id "
            "LEFT JOIN error_signature_links s ON s.sig = l.error_signature "
            f"WHERE m.fix_kind IN ({','.join('?' * len(kinds))}) AND l.worked > 0 AND {where} GROUP BY m.fix_kind",
            (*kinds, *wparams),
        ).fetchall():
            breadth[kind] = int(n)
    if mids:
        for mid, n in core.backend.execute(
            f"SELECT l.memory_id, COUNT(DISTINCT {_GROUP}) FROM fix_links l "
            "LEFT JOIN error_signature_links s ON s.sig = l.error_signature "
            f"WHERE l.memory_id IN ({','.join('?' * len(mids))}) AND l.worked > 0 GROUP BY l.memory_id",
            mids,
        ).fetchall():
            breadth[f"memory_{mid}"] = int(n)
    return [r for r in rows if breadth.get(_kind_key(r), 0) >= least]


def rank(
    core: Core,
    signed: ErrorSignature,
    *,
    agent_id: str | None,
    namespace: str,
    limit: int = 5,
    min_score: float = 0.5,
    similar_min: float | None = None,
    task_signature: str | None = None,
) -> tuple[list[FixEvidence], list[FixEvidence]]:
    """``(fixes, did_not_work)`` for an error, best first (see the module docstring); ``task_signature``:
    the failed task's signature (the same-task tier and the tie-break of exact links)."""
    aliases = core.miner.group(signed.id)
    exact = {signed.id, core.miner.canonical(signed.id)}
    vis, vparams = core.visibility(agent_id, True)
    # a memory's credits that no link holds (apply() without the error or an advised task) count for
    # every error, weakly; credits a link holds count for that link's error only
    cols = (
        "l.id, l.memory_id, l.error_signature, l.worked, l.failed, l.last_at, m.fix_kind, "
        "m.times_applied - m.times_successful - (SELECT COALESCE(SUM(x.unhelpful), 0) FROM fix_links x "
        "WHERE x.memory_id = m.id), "
        "m.times_successful - (SELECT COALESCE(SUM(x.helpful), 0) FROM fix_links x WHERE x.memory_id = m.id), "
        "l.bound_params, l.helpful, l.unhelpful, l.error_message, l.task_signature, l.error_origin, l.error_instance"
    )
    where = f"m.namespace = ? AND {vis} AND m.archived = 0 AND (m.expires_at IS NULL OR m.expires_at > ?)"
    wparams = (namespace, *vparams, core.now())
    ph = ",".join("?" * len(aliases))
    rows = core.backend.execute(
        f"SELECT {cols} FROM fix_links l JOIN memories m ON m.id = l.memory_id "
        f"WHERE l.error_signature IN ({ph}) AND {where}",
        (*aliases, *wparams),
    ).fetchall()
    # the same error again: an exact or alias link whose taught error had the asked decisive line and key frame, values
    # included (Settings.fix_recurrence, fix_once_same_values); only where the template has variable parts, so the
    # line says more than the signature does
    asked_text = link_text(signed)
    query = words(asked_text)
    asked_line = " ".join(asked_text[:2000].split())  # as links keep it
    by_values = signed.params and (core.settings.fix_recurrence or core.settings.fix_once_same_values)
    same_values = {r[0] for r in rows if by_values and " ".join((r[12] or "").split()) == asked_line}
    recurs = {r[0] for r in rows if r[0] in same_values and r[3] > r[4]} if core.settings.fix_recurrence else set()
    once_same = core.settings.fix_once_same_values and bool(signed.params)
    # an error fixed at least fix_distinct_min times, each time by a different kind and none of them backed
    # twice, does not predict its next fix (a signature shared by unrelated failures): its own links stay out
    # (the tiers below, which need several errors of the same task or origin, may still answer)
    unpredictive: set[int] = set()
    asked_grams = line_grams(asked_text)
    distinct = core.settings.fix_distinct_min
    if distinct is not None and rows:
        backing: dict[str, int] = defaultdict(int)  # per kind: links taught + helpful credits (here and unattributed)
        for r in rows:
            backing[_kind_key(r)] += r[3] + r[10] + max(0, r[8])
        fixed_by = {kind for kind, n in backing.items() if n > 0}
        if len(fixed_by) >= distinct and max(backing.values()) <= 1:
            unpredictive = {r[0] for r in rows if _kind_key(r) in fixed_by and r[0] not in recurs}
            # ... unless the asked error is clearly one of the instances: the kind whose taught error is the nearest
            # to it (fix_nearest_min), by fix_nearest_margin over every other kind's, is the instance's fix
            nearest = _nearest_kind(rows, asked_grams, core.settings.fix_nearest_min, core.settings.fix_nearest_margin)
            unpredictive -= {r[0] for r in rows if _kind_key(r) == nearest}
            rows = [r for r in rows if r[0] not in unpredictive]  # what did not work is still listed
    rows = _local_evidence(core, rows, signed.origin, aliases)
    if core.settings.fix_instance_credits:
        asked_instance = (instance_grams(instance_line(signed)), instance_grams(instance_text(signed)))
        rows = _instance_evidence(core, rows, asked_instance, signed.origin, aliases, core.settings.fix_nearest_margin)
    sims: dict[int, float] = {r[0]: 1.0 for r in rows}
    levels: dict[int, str] = {r[0]: ("exact" if r[2] in exact else "alias") for r in rows}
    # a new error also finds the fixes of linked errors whose excerpts are nearly the same text
    threshold = similar_min if similar_min is not None else core.settings.fix_similar_min
    if threshold is None:
        threshold = 2.0  # off: exact and alias links only
    if threshold <= 1.0:
        near: dict[int, float] = {}
        # two texts of the asked error are compared with the linked errors': its decisive line with the key frame, and
        # its failure block (the line with its few lines of detail, a stack trace's frames): the same script failing
        # in other words shares its frames. A link is as similar as the nearer of its two texts
        block = words(instance_text(signed))
        for asked, search in ((query, core.backend.similar_errors), (block, core.backend.similar_blocks)):
            if len(asked) < SIMILAR_MIN_WORDS:
                continue
            for lid, text in search(_search_terms(asked), SIMILAR_CANDIDATES, where, wparams):
                other = words(text or "")
                if lid not in sims and lid not in unpredictive and len(other) >= SIMILAR_MIN_WORDS:
                    sim = _jaccard(asked, other)
                    if sim >= threshold and sim > near.get(lid, 0.0):
                        near[lid] = sim
        if near:
            more = core.backend.execute(
                f"SELECT {cols} FROM fix_links l JOIN memories m ON m.id = l.memory_id "
                f"WHERE l.id IN ({','.join('?' * len(near))}) AND {where}",
                (*near, *wparams),
            ).fetchall()
            more = _broad(core, more, core.settings.fix_similar_breadth, where, wparams)
            for r in more:
                sims[r[0]] = near[r[0]]
                levels[r[0]] = "similar"
            rows += more
    # opt-in: a fix kind that fixed several distinct errors of this category is offered for a new one
    general = core.settings.fix_general_min
    if general is not None and signed.category:
        for r in core.backend.execute(
            f"SELECT {cols} FROM fix_links l JOIN memories m ON m.id = l.memory_id "
            f"WHERE l.error_category = ? AND {where} AND m.fix_kind IN (SELECT m.fix_kind FROM fix_links l "
            "JOIN memories m ON m.id = l.memory_id "
            f"WHERE l.error_category = ? AND l.worked > l.failed AND m.fix_kind IS NOT NULL AND {where} "
            "GROUP BY m.fix_kind HAVING COUNT(DISTINCT l.error_signature) >= ?)",
            (signed.category, *wparams, signed.category, *wparams, general),
        ).fetchall():
            if r[0] not in sims and r[0] not in unpredictive:
                sims[r[0]] = GENERAL_WEIGHT
                levels[r[0]] = "general"
                rows.append(r)
    # the same task fixed before with a different error: a kind that fixed this task for at least
    # Settings.fix_task_min distinct errors (and holds fix_task_share of the task's fixes) is offered;
    # then, likewise, a kind that fixed errors whose runs started in the same place (ErrorSignature.origin)
    taught_here: dict[str, int] = defaultdict(int)  # per kind: worked - did not work, taught for this very task
    for level, column, key, least in (
        ("task", "task_signature", task_signature, core.settings.fix_task_min),
        ("origin", "error_origin", signed.origin, core.settings.fix_origin_min),
    ):
        if key is None or (least is None and level != "task"):
            continue
        same = core.backend.execute(
            f"SELECT {cols} FROM fix_links l JOIN memories m ON m.id = l.memory_id WHERE l.{column} = ? AND {where}",
            (key, *wparams),
        ).fetchall()
        if level == "task":
            for r in same:
                taught_here[_kind_key(r)] += r[3] - r[4]
        if least is None:
            continue
        fixed: dict[str, int] = defaultdict(int)  # per kind: errors it fixed there, net of its failures
        for r in same:
            fixed[_kind_key(r)] += (r[3] + r[10] > r[4] + r[11]) - (r[3] + r[10] < r[4] + r[11])
        total = sum(max(0, n) for n in fixed.values())
        for r in same:
            n = fixed[_kind_key(r)]
            if r[0] not in sims and n >= least and n >= core.settings.fix_task_share * total:
                sims[r[0]] = TASK_WEIGHT
                levels[r[0]] = level
                rows.append(r)
    # a fix that names its error's variable part (pip install pyyaml for 'yaml') applies to that value only
    have = {p.strip("\"'`<>").lower() for p in signed.params}
    low = (signed.message or "").lower()
    rows = [r for r in rows if not r[9] or all(p in have or p in low for p in json.loads(r[9]))]
    if not rows:
        return [], []
    refuted = _refuted_here(core, rows, task_signature, taught_here)
    once_min = core.settings.fix_once_similar_min
    order = {"exact": 5, "alias": 4, "task": 3, "origin": 2, "similar": 1, "general": 0}
    kinds: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "worked": 0,
            "failed": 0,
            "helpful": 0,
            "unhelpful": 0,
            "members": {},
            "level": "general",
            "last": 0.0,
            "weighted": 0.0,
            "sim": 0.0,
            "errors": 0,
            "m_net": 0,
            "closest": 0.0,
            "same_task": False,
            "recurs": False,
            "same_values": False,
            "backing": 0,
            "taught_lines": [],  # the decisive lines it was taught for at exact / alias level (fix_once_similar_min)
        }
    )
    for (
        lid,
        mid,
        _sig,
        worked,
        failed,
        last_at,
        kind,
        m_unhelp,
        m_help,
        _bound,
        l_help,
        l_unhelp,
        msg,
        tsig,
        _o,
        _instance,
    ) in rows:
        k = kinds[kind or f"memory_{mid}"]
        # same error and same task before same error alone
        k["same_task"] = k["same_task"] or (task_signature is not None and tsig == task_signature)
        k["recurs"] = k["recurs"] or lid in recurs
        k["same_values"] = k["same_values"] or lid in same_values
        k["backing"] += worked + l_help
        k["worked"] += worked
        k["failed"] += failed
        k["weighted"] += sims[lid] * (worked - failed + l_help - l_unhelp)
        k["sim"] = max(k["sim"], sims[lid])
        # the closest taught instance of the error breaks ties between equally backed fixes
        k["closest"] = max(k["closest"], _jaccard(query, words(msg or "")))
        if once_min is not None and worked > 0 and levels[lid] in ("exact", "alias"):  # a taught instance of it
            k["taught_lines"].append(msg or "")
        k["errors"] += max(1, worked)  # observations that back this kind
        k["helpful"] += l_help
        k["unhelpful"] += l_unhelp
        if mid not in k["members"]:  # the memory's unattributed credits, once per member
            k["helpful"] += max(0, m_help)
            k["unhelpful"] += max(0, m_unhelp)
            k["m_net"] += max(0, m_help) - max(0, m_unhelp)
            k["backing"] += max(0, m_help)
        # a member is ranked by how closely it is linked to this error, then by recency
        k["members"][mid] = max(k["members"].get(mid, (0, 0.0, 0.0)), (order[levels[lid]], sims[lid], last_at))
        if order[levels[lid]] > order[k["level"]]:
            k["level"] = levels[lid]
        k["last"] = max(k["last"], last_at)
    fixes: list[dict[str, Any]] = []
    failed = []  # (the loop above bound the name to a count)
    for kind, k in kinds.items():
        if k["level"] == "similar" and k["sim"] < SIMILAR_ALONE and k["errors"] < 2:
            continue  # one loosely similar error is not evidence enough
        net = k["weighted"] + MEMORY_CREDIT * k["m_net"]
        newest = max(k["members"], key=lambda m: (k["members"][m], m))  # the best-linked variant stands for it
        ev = dict(
            kind=kind,
            level=k["level"],
            worked=k["worked"],
            failed=k["failed"],
            helpful=k["helpful"],
            unhelpful=k["unhelpful"],
            variants=len(k["members"]),
            score=round(net, 4),
            similarity=k["sim"],
            newest=newest,
            last=k["last"],
            closest=k["closest"],
            same_task=k["same_task"],
            recurs=k["recurs"],
        )
        backed = k["worked"] + k["helpful"] > 0 and kind not in refuted
        if once_same and k["level"] in ("exact", "alias") and k["backing"] <= 1 and not k["same_values"]:
            continue  # backed once, for other values: one instance, not the signature, is what it fixed
        once = k["level"] in ("exact", "alias") and k["backing"] <= 1 and k["taught_lines"]
        if once and once_min is not None:  # (compared only here: a kind backed more than once needs no lines read)
            if max(_jaccard(asked_grams, line_grams(t)) for t in k["taught_lines"]) < once_min:
                continue  # backed once, by an instance unlike the asked one (fix_once_similar_min)
        # the same error again outweighs what other errors of its signature said about the fix
        (fixes if backed and (net >= min_score * k["sim"] or k["recurs"]) else failed).append(ev)
    fixes.sort(
        key=lambda e: (
            order[e["level"]],
            e["same_task"],
            e["recurs"],
            e["score"],
            e["closest"],
            e["last"],
            e["newest"],
        ),
        reverse=True,
    )
    failed.sort(key=lambda e: (e["score"], -e["last"]))
    fixes, failed = fixes[:limit], failed[:limit]
    mems = {
        r[0]: row_to_memory(r)
        for r in core.backend.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({','.join('?' * len(fixes + failed)) or 'NULL'})",
            [e["newest"] for e in fixes + failed],
        )
    }

    def build(e: dict[str, Any]) -> FixEvidence:
        return FixEvidence(
            memory=mems[e["newest"]],
            **{k: v for k, v in e.items() if k not in ("newest", "last", "closest", "same_task", "recurs")},
        )

    return [build(e) for e in fixes if e["newest"] in mems], [build(e) for e in failed if e["newest"] in mems]
