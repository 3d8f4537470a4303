"""Fix recall: does the fix that worked come back when the error recurs? (issue 19)

    python benchmarks/fix_recall.py [--data ../shared/data] [--teach learn_success|learn_error|on_task_complete|learn_fix]
                                    [--no-credit] [--online] [--sources agent-runs scripted defects4j]
                                    [--fix-similar-min X] [--fix-general-min N] [--fix-task-min N|off]
                                    [--fix-task-share X] [--fix-recurrence] [--fix-once-same-values]
                                    [--fix-nearest-min X|off] [--fix-nearest-margin X] [--fix-once-similar-min X|off]

A replay of real failure→repair streams through the public API, as a harness would use it.

Sources
- ``agent-runs``: ``<data>/agent-runs/runs-dev.jsonl.gz`` (mini-swe-agent on django, matplotlib,
  astropy; steps ``{command, returncode, output}``).
- ``scripted``: ``tests/fixtures/fix_streams/sessions.jsonl``, sessions recorded here by running
  real tools in throw-away projects (see that folder's README: wrong test runner, missing
  module, missing fixture, lint fixers, migrations, npm scripts, make targets, permissions,
  python version, link flags, and sessions that never get repaired).
- ``defects4j``: ``<data>/defects4j-traces/traces-dev.jsonl`` (see below).

Pairs, targets and shapes (command sources): defined mechanically in ``fix_streams.py`` (its
docstring is the reference). In short: a failure is a step with returncode ≠ 0 that runs
something (edit/inspection/setup steps — cat, sed, grep, ls, find, echo, heredoc writes, git,
pip install, … — are neither failures nor repairs); its repair is the first later step of the
same run with returncode 0 whose targets (script file, test file/module/label, a ``cd`` dir
when nothing else) intersect the failure's after normalisation (``./``, ``.py``, ``/`` vs
``.``, ``::``). The shape of a command replaces its targets by ``<target>`` and strips ``cd``,
env assignments, ``timeout N``, redirections and filter pipes. A returned fix is a HIT when
shape(fix text) == shape(true repair). The fix text of a memory is its content; when the
content is not a bare command but ends with a taught repair (``on_task_complete`` stores
"<title>: <summary>", ``learn_error`` stores "<error>: <fix>") that repair is what is compared.

Defects4J: bugs (``group``) in a fixed shuffled order (seed 19); 30% are held out entirely
(never taught: every trace of theirs is asked, and any fix returned is false advice). For
each other bug the first trace is taught with the fix record ``patch <group>: <test class>``
and every further trace of that bug is asked: the hit is a returned record of the same bug.
Long traces keep their first and last 5,000 characters.

Replay (per source, one fresh SQLite store per source): the runs of each repository in
instance order (instance numbers follow the repository's history); the earlier 60% of each
repository's runs are taught — every pair through the ``--teach`` call — and every failure
of the later 40% (pairs and failures without repair), in time order, is asked through
``store.on_task_error(task, failure_output)``; the answer list is ``advice.fixes`` in the
order returned. With ``--credit`` (default) the fixes a harness would show (the first three,
as ``advice.prompt`` renders them) are credited ``store.apply(id, helpful=<hit>)``. With
``--online`` a second replay also teaches each asked run's pairs once the run has ended (not
for Defects4J, where each bug is one task: nothing asked could become seen, only distractors
would be added). ``--details`` lists every asked failure with the answers' shapes.

The task. A harness always knows what it was running, so every teach and ask call carries the
failed task the way a harness would give it: for the command sources its title is the failed
command as run (before 2026-11-26 it was the run's instance id, which no two failures share and
which the library then ignored for fixes); for Defects4J it is ``"<project> failing test
<test class>"``. ``on_task_error({"id": case, "title": task})`` asks; the teach calls pass the
same title (``task=`` or its ``task_signature``).

Teach calls (``--teach``):
- ``learn_success``: ``store.learn_success(agent, repair, error=failure_output,
  task_signature=store.task_signature(title))`` (default)
- ``learn_error``:   ``store.learn_error(agent, failure_output, repair, task_signature=...)``
- ``on_task_complete``: ``store.on_task_complete({"id": case, "title": title}, {"success": True,
  "summary": repair, "error": failure_output})`` (no context)
- ``learn_fix``:     ``store.learn_fix(failure_output, repair, agent_id=agent, worked=True, task=title)``
  (issue 19's teaching API; exits 2 when the store has none)

Figures per method: hit@1 / hit@3 over *seen* pairs (the repair's shape was taught before)
and over all pairs; ``answered`` = share of all asked failures that got at least one fix;
false advice = share of asked pairs whose repair shape was never taught that still got a
fix ("unseen"), and the same for asked failures that have no repair at all ("no repair").
Baselines in the same replay, on the same pairs: BM25 (k1 1.5, b 0.75, over the taught
failure outputs) nearest earlier failures → their repairs, a shape listed once; the most
frequent repair shape taught for the same *failed command shape* (Defects4J: the same
failing test class) — a baseline that knows what was run; best possible = share of asked
pairs whose repair shape was taught at all. Issue 19's targets: on_task_error hit@3 ≥ 0.6
where the best possible is ~0.7, above BM25 in the same run, false advice ≤ 0.1.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_dir, table
from fix_streams import extract_failures, instance_number, load_runs, shape
from harness_memory import MemoryStore

AGENT = "harness"
SESSIONS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "fix_streams" / "sessions.jsonl"
TEACH_MODES = ["learn_success", "learn_error", "on_task_complete", "learn_fix"]
TEACH_SHARE = 0.6
D4J_HOLDOUT = 0.3
D4J_SEED = 19


# ---------------------------------------------------------------------------------------------
# cases


@dataclass
class Case:
    """One failure, as taught or asked."""

    case_id: str  # unique: the task id given to the store
    title: str
    error: str
    failed_key: str  # what the "most frequent" baseline keys on
    repair: str | None  # the repair's text (a command, or a fix record)
    repair_shape: str | None
    changed: bool = False  # the repair's shape differs from the failed command's
    run_title: str = ""  # the run's own title (its instance id, or the Defects4J bug): --task run


@dataclass
class Task:
    """A run (or a Defects4J bug): its failures in time order."""

    group: str  # repository (agent runs, scripted) or project (Defects4J)
    order: tuple
    cases: list[Case]
    teach: bool = False


@dataclass
class Source:
    name: str
    tasks: list[Task]
    answer_shape: Callable[[str, dict[str, str]], str]  # fix text, known taught repairs -> shape
    groups: list[str] = field(default_factory=list)


def command_answer_shape(text: str, known: dict[str, str]) -> str:
    t = text.strip()
    if t in known:
        return known[t]
    best = None
    for rep, shp in known.items():
        if (
            len(rep) > 2
            and t.endswith(rep)
            and t[: -len(rep)].endswith(": ")
            and (best is None or len(rep) > len(best[0]))
        ):
            best = (rep, shp)
    return best[1] if best else shape(t)


def runs_source(name: str, runs: list[dict]) -> Source:
    by_repo: dict[str, list[dict]] = collections.defaultdict(list)
    for r in runs:
        by_repo[r.get("repo") or "?"].append(r)
    tasks = []
    for repo in sorted(by_repo):
        rs = sorted(by_repo[repo], key=lambda r: instance_number(r["instance_id"]))
        n_teach = int(round(TEACH_SHARE * len(rs)))
        for k, r in enumerate(rs):
            cases = [
                Case(
                    f.run_id,
                    f.command.strip()[:2000] or r["instance_id"],  # the task a harness knows: what it ran
                    f.output or "(no output)",
                    f.failed_shape,
                    f.repair,
                    f.repair_shape,
                    changed=f.repair is not None and f.repair_shape != f.failed_shape,
                    run_title=r["instance_id"],
                )
                for f in extract_failures(r, k)
            ]
            tasks.append(Task(repo, (repo, k), cases, teach=k < n_teach))
    return Source(name, tasks, command_answer_shape, sorted(by_repo))


_PATCH = re.compile(r"patch ([A-Za-z][\w]*-\d+)\b")


def d4j_answer_shape(text: str, known: dict[str, str]) -> str:
    found = _PATCH.findall(text)
    return f"patch {found[-1]}" if found else text.strip()[:80]


def _cut(text: str, keep: int = 5000) -> str:
    return (
        text
        if len(text) <= 2 * keep + 100
        else f"{text[:keep]}\n[... {len(text) - 2 * keep} characters cut ...]\n{text[-keep:]}"
    )


def d4j_source(path: Path) -> Source:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    bugs: dict[str, list[dict]] = collections.defaultdict(list)
    for r in rows:
        bugs[r["group"]].append(r)
    names = sorted(bugs, key=lambda g: (g.split("-")[0], int(g.split("-")[-1]) if g.split("-")[-1].isdigit() else 0))
    random.Random(D4J_SEED).shuffle(names)
    n_hold = int(round(D4J_HOLDOUT * len(names)))
    held = set(names[:n_hold])
    taught_tasks, asked_tasks = [], []
    for k, g in enumerate(names):
        traces = bugs[g]
        project = traces[0]["project"]

        def case(i: int, r: dict, with_fix: bool, traces: list = traces, g: str = g, project: str = project) -> Case:
            cls = r["test"].split("::")[0]
            fix_cls = traces[0]["test"].split("::")[0]
            return Case(
                f"d4j-{g}-{i}",
                f"{project} failing test {cls.rsplit('.', 1)[-1]}",
                _cut(r["trace"]),
                cls,
                f"patch {g}: {fix_cls}" if with_fix else None,
                f"patch {g}" if with_fix else None,
                run_title=g,
            )

        if g in held:  # never taught: all traces asked, none has a taught repair
            asked_tasks.append(Task(project, (1, k), [case(i, r, True) for i, r in enumerate(traces)]))
        else:
            taught_tasks.append(Task(project, (0, k), [case(0, traces[0], True)], teach=True))
            if len(traces) > 1:
                asked_tasks.append(Task(project, (1, k), [case(i, r, True) for i, r in enumerate(traces) if i]))
    return Source(
        "defects4j", taught_tasks + asked_tasks, d4j_answer_shape, sorted({t.group for t in taught_tasks + asked_tasks})
    )


# ---------------------------------------------------------------------------------------------
# baselines


class BM25:
    """Okapi BM25 over taught failure outputs, incremental (k1 1.5, b 0.75)."""

    _TOKEN = re.compile(r"[a-z0-9_]{2,}")

    def __init__(self, k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.docs: list[collections.Counter] = []
        self.lens: list[int] = []
        self.payload: list[str] = []
        self.df: collections.Counter = collections.Counter()
        self.postings: dict[str, list[int]] = collections.defaultdict(list)

    def tokens(self, text: str) -> list[str]:
        return self._TOKEN.findall(text.lower())

    def add(self, text: str, payload: str) -> None:
        tf = collections.Counter(self.tokens(text))
        i = len(self.docs)
        self.docs.append(tf)
        self.lens.append(sum(tf.values()))
        self.payload.append(payload)
        for t in tf:
            self.df[t] += 1
            self.postings[t].append(i)

    def search(self, text: str) -> list[tuple[float, int]]:
        if not self.docs:
            return []
        n, avg = len(self.docs), (sum(self.lens) / len(self.lens)) or 1.0
        scores: dict[int, float] = collections.defaultdict(float)
        for t in set(self.tokens(text)):
            if t not in self.df:
                continue
            idf = math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5))
            for i in self.postings[t]:
                f = self.docs[i][t]
                scores[i] += idf * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * self.lens[i] / avg))
        return sorted(((s, i) for i, s in scores.items()), key=lambda x: (-x[0], -x[1]))

    def answer(self, text: str, k: int = 3) -> list[str]:
        out: list[str] = []
        for _, i in self.search(text):
            if self.payload[i] not in out:
                out.append(self.payload[i])
                if len(out) == k:
                    break
        return out


class MostFrequent:
    """Repair shapes taught per failed-command shape, most frequent first (ties: most recent)."""

    def __init__(self):
        self.by_key: dict[str, dict[str, list[int]]] = collections.defaultdict(dict)
        self.t = 0

    def add(self, key: str, repair_shape: str) -> None:
        self.t += 1
        c = self.by_key[key].setdefault(repair_shape, [0, 0])
        c[0] += 1
        c[1] = self.t

    def answer(self, key: str, k: int = 3) -> list[str]:
        cands = self.by_key.get(key, {})
        return [s for s, _ in sorted(cands.items(), key=lambda x: (-x[1][0], -x[1][1]))][:k]


# ---------------------------------------------------------------------------------------------
# the store: teach and ask


def _memory(obj):
    return getattr(obj, "memory", obj)


def title_of(c: Case) -> str:
    """The task title the harness gives (``--task``)."""
    return c.run_title if TASK == "run" else c.title


class Teacher:
    def __init__(self, store: MemoryStore, mode: str):
        self.store, self.mode = store, mode
        self.errors = 0
        self.calls = 0

    def __call__(self, c: Case) -> None:
        s, self.calls = self.store, self.calls + 1
        # --task run is the issue's own protocol: learn_success(agent, repair, error=output), no task
        tsig = s.task_signature(c.title) if TASK == "command" else None
        try:
            if self.mode == "learn_success":
                s.learn_success(AGENT, c.repair, error=c.error, task_signature=tsig)
            elif self.mode == "learn_error":
                s.learn_error(AGENT, c.error, c.repair, task_signature=tsig)
            elif self.mode == "on_task_complete":
                s.on_task_complete(
                    {"id": c.case_id, "title": title_of(c), "agent_id": AGENT},
                    {"success": True, "summary": c.repair, "error": c.error},
                )
            elif self.mode == "learn_fix":
                s.learn_fix(
                    c.error, c.repair, agent_id=AGENT, worked=True, task=title_of(c) if TASK == "command" else None
                )
            else:  # pragma: no cover - argparse restricts the choices
                raise ValueError(self.mode)
        except Exception as exc:  # noqa: BLE001 - counted and reported, never silently dropped
            self.errors += 1
            if self.errors <= 3:
                print(f"  teach error ({self.mode}, {c.case_id}): {type(exc).__name__}: {exc}"[:300], file=sys.stderr)


@dataclass
class Outcome:
    """What one method answered for one asked failure."""

    answered: bool
    hit1: bool
    hit3: bool


@dataclass
class Asked:
    case: Case
    group: str
    seen: bool
    out: dict[str, Outcome]
    answers: dict[str, list[str]] = field(default_factory=dict)


def _score(shapes: list[str], truth: str | None) -> Outcome:
    return Outcome(bool(shapes), truth is not None and shapes[:1] == [truth], truth is not None and truth in shapes[:3])


TASK = "command"  # --task: the title a harness gives, "command" (the failed command) or "run" (the run's id)
SETTINGS: dict = {}  # Settings fields for the store under test (--fix-similar-min, --fix-general-min)


def replay(src: Source, mode: str, *, credit: bool, online: bool, db_dir: Path) -> tuple[list[Asked], dict]:
    from harness_memory import Settings

    store = MemoryStore(
        db_dir / f"{src.name}-{mode}-{'online' if online else 'static'}.db", settings=Settings(**SETTINGS)
    )
    teach = Teacher(store, mode)
    bm25, freq = BM25(), MostFrequent()
    known: dict[str, str] = {}
    taught_shapes: set[str] = set()
    stats = collections.Counter()

    def learn(c: Case) -> None:
        teach(c)
        bm25.add(c.error, c.repair_shape)
        freq.add(c.failed_key, c.repair_shape)
        known[c.repair.strip()] = c.repair_shape
        taught_shapes.add(c.repair_shape)

    t0 = time.perf_counter()
    teach_tasks = [t for t in src.tasks if t.teach]
    ask_tasks = sorted((t for t in src.tasks if not t.teach), key=lambda t: t.order)
    for t in sorted(teach_tasks, key=lambda t: t.order):
        for c in t.cases:
            if c.repair is not None:
                learn(c)
                stats["taught"] += 1
    stats["teach_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    asked: list[Asked] = []
    for t in ask_tasks:
        for c in t.cases:
            try:
                advice = store.on_task_error({"id": c.case_id, "title": title_of(c), "agent_id": AGENT}, c.error)
                fixes = [_memory(m) for m in advice.fixes]
            except Exception as exc:  # noqa: BLE001 - counted and reported as an unanswered failure
                stats["ask_errors"] += 1
                if stats["ask_errors"] <= 3:
                    print(f"  on_task_error error ({c.case_id}): {type(exc).__name__}: {exc}"[:300], file=sys.stderr)
                fixes = []
            shapes = [src.answer_shape(m.content, known) for m in fixes]
            seen = c.repair_shape is not None and c.repair_shape in taught_shapes
            answers = {
                "on_task_error": shapes,
                "BM25 nearest failure": bm25.answer(c.error),
                "most frequent repair": freq.answer(c.failed_key),
            }
            out = {m: _score(a, c.repair_shape) for m, a in answers.items()}
            asked.append(Asked(c, t.group, seen, out, answers))
            if credit:
                for m, shp in list(zip(fixes, shapes))[:3]:
                    try:
                        store.apply(m.id, helpful=shp == c.repair_shape, agent_id=AGENT, task_id=c.case_id)
                        stats["credits"] += 1
                    except LookupError:
                        pass
        if online:
            for c in t.cases:
                if c.repair is not None:
                    learn(c)
                    stats["taught_online"] += 1
    stats["ask_s"] = time.perf_counter() - t0
    stats["teach_errors"] = teach.errors
    store.close()
    return asked, dict(stats)


# ---------------------------------------------------------------------------------------------
# figures

METHODS = ["on_task_error", "BM25 nearest failure", "most frequent repair"]
HEADER = [
    "group",
    "answer",
    "pairs",
    "seen",
    "hit@1 seen",
    "hit@3 seen",
    "hit@1 all",
    "hit@3 all",
    "answered",
    "false adv. unseen",
    "false adv. no repair",
]


def _rate(xs: list[bool]) -> float | str:
    return sum(xs) / len(xs) if xs else "-"


def rows_for(label: str, asked: list[Asked]) -> list[list]:
    pairs = [a for a in asked if a.case.repair is not None]
    seen = [a for a in pairs if a.seen]
    unseen = [a for a in pairs if not a.seen]
    norep = [a for a in asked if a.case.repair is None]
    rows = []
    for m in METHODS:
        rows.append(
            [
                label,
                m,
                len(pairs),
                len(seen),
                _rate([a.out[m].hit1 for a in seen]),
                _rate([a.out[m].hit3 for a in seen]),
                _rate([a.out[m].hit1 for a in pairs]),
                _rate([a.out[m].hit3 for a in pairs]),
                _rate([a.out[m].answered for a in asked]),
                _rate([a.out[m].answered for a in unseen]),
                _rate([a.out[m].answered for a in norep]),
            ]
        )
    best = _rate([a.seen for a in pairs])
    rows.append(
        [
            label,
            "best possible",
            len(pairs),
            len(seen),
            1.0 if seen else "-",
            1.0 if seen else "-",
            best,
            best,
            "-",
            "-",
            "-",
        ]
    )
    return rows


def report(src: Source, asked: list[Asked], stats: dict, title: str) -> str:
    rows: list[list] = []
    groups = [g for g in src.groups if any(a.group == g for a in asked)]
    if len(groups) > 1 and src.name != "defects4j":
        for g in groups:
            rows += rows_for(g, [a for a in asked if a.group == g])
    rows += rows_for("pooled", asked)
    changed = [a for a in asked if a.case.repair is not None and a.case.changed]
    if changed and len(changed) < sum(a.case.repair is not None for a in asked) and src.name != "defects4j":
        rows += rows_for("pooled, repair changes the command", changed)
    n_fail = len(asked)
    n_pairs = sum(a.case.repair is not None for a in asked)
    n_seen = sum(a.seen for a in asked)
    n_norep = n_fail - n_pairs
    lines = [table(title, HEADER, rows)]
    lines.append(
        f"asked failures {n_fail}: pairs {n_pairs} (seen {n_seen}, unseen {n_pairs - n_seen}), "
        f"without repair {n_norep}; taught pairs {stats.get('taught', 0)}"
        + (f" (+{stats['taught_online']} online)" if stats.get("taught_online") else "")
        + f", teach errors {stats.get('teach_errors', 0)}, ask errors {stats.get('ask_errors', 0)}, "
        f"credits {stats.get('credits', 0)}; "
        f"teach {stats.get('teach_s', 0):.1f} s, ask {stats.get('ask_s', 0):.1f} s"
    )
    pooled = {r[1]: r for r in rows_for("pooled", asked)}
    lib, bm, best = pooled["on_task_error"], pooled["BM25 nearest failure"], pooled["best possible"]

    def f(x):
        return f"{x:.2f}" if isinstance(x, float) else str(x)

    fa = [x for x in (lib[9], lib[10]) if isinstance(x, float)]
    lines.append(
        "targets (issue 19): on_task_error hit@3 all pairs ≥ 0.6 where best is ~0.7 → "
        f"{f(lib[7])} (best {f(best[7])}) {'met' if isinstance(lib[7], float) and lib[7] >= 0.6 else 'NOT met'}; "
        f"above BM25 hit@3 {f(bm[7])} → {'met' if isinstance(lib[7], float) and isinstance(bm[7], float) and lib[7] > bm[7] else 'NOT met'}; "
        f"false advice ≤ 0.1 → unseen {f(lib[9])}, no repair {f(lib[10])} "
        f"{'met' if fa and max(fa) <= 0.1 else 'NOT met' if fa else ''}"
    )
    return "\n".join(lines)


def details(asked: list[Asked]) -> str:
    lines = []
    for a in asked:
        lib = a.answers.get("on_task_error", [])
        mark = "HIT" if a.out["on_task_error"].hit3 else ("-" if not lib else "miss")
        lines.append(
            f"{mark:4} {a.case.case_id} [{'seen' if a.seen else 'unseen' if a.case.repair else 'no repair'}] "
            f"truth={a.case.repair_shape!r} on_task_error={lib[:3]!r} "
            f"bm25={a.answers.get('BM25 nearest failure', [])[:1]!r}"
        )
    return "\n".join(lines)


def load_sources(names: list[str], data: Path, sessions: Path) -> list[Source]:
    out = []
    for n in names:
        if n == "agent-runs":
            p = data / "agent-runs" / "runs-dev.jsonl.gz"
            if not p.exists():
                sys.exit(f"{p} not found: pass --data DIR (see ../shared/data/README.md)")
            out.append(runs_source("agent-runs", load_runs(p)))
        elif n == "scripted":
            if not sessions.exists():
                sys.exit(f"{sessions} not found (tests/fixtures/fix_streams/make_sessions.py records it)")
            out.append(runs_source("scripted", load_runs(sessions)))
        elif n == "defects4j":
            p = data / "defects4j-traces" / "traces-dev.jsonl"
            if not p.exists():
                sys.exit(f"{p} not found: pass --data DIR (see ../shared/data/README.md)")
            out.append(d4j_source(p))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Fix recall replay benchmark (issue 19)")
    ap.add_argument("--data", default=None, help="benchmark data folder (default ../shared/data)")
    ap.add_argument("--sessions", type=Path, default=SESSIONS, help="scripted sessions (JSON lines)")
    ap.add_argument("--teach", choices=TEACH_MODES, default="learn_success")
    ap.add_argument(
        "--credit",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="apply(helpful=hit) to the fixes shown after each answer (default on)",
    )
    ap.add_argument("--online", action="store_true", help="also replay teaching each asked run's pairs after it")
    ap.add_argument("--details", action="store_true", help="list every asked failure and the answers' shapes")
    ap.add_argument(
        "--sources",
        nargs="+",
        default=["agent-runs", "scripted", "defects4j"],
        choices=["agent-runs", "scripted", "defects4j"],
    )
    ap.add_argument(
        "--fix-similar-min",
        type=float,
        default=None,
        help="Settings.fix_similar_min of the store under test (default: the library's default, off)",
    )
    ap.add_argument(
        "--fix-similar-breadth",
        type=int,
        default=None,
        help="Settings.fix_similar_breadth of the store under test (default: the library's default)",
    )
    ap.add_argument(
        "--fix-general-min",
        type=int,
        default=None,
        help="Settings.fix_general_min of the store under test (default: the library's default, off)",
    )
    ap.add_argument(
        "--fix-task-min",
        default=None,
        help="Settings.fix_task_min of the store under test, or 'off' (default: the library's default)",
    )
    ap.add_argument(
        "--fix-origin-min",
        default=None,
        help="Settings.fix_origin_min of the store under test, or 'off' (default: the library's default)",
    )
    ap.add_argument(
        "--fix-distinct-min",
        default=None,
        help="Settings.fix_distinct_min of the store under test, or 'off' (default: the library's default)",
    )
    ap.add_argument(
        "--fix-recurrence", action="store_true", help="Settings.fix_recurrence=True for the store under test"
    )
    ap.add_argument(
        "--fix-once-same-values",
        action="store_true",
        help="Settings.fix_once_same_values=True for the store under test",
    )
    ap.add_argument(
        "--fix-nearest-min",
        default=None,
        help="Settings.fix_nearest_min of the store under test, or 'off' (default: the library's default)",
    )
    ap.add_argument(
        "--fix-nearest-margin",
        type=float,
        default=None,
        help="Settings.fix_nearest_margin of the store under test (default: the library's default)",
    )
    ap.add_argument(
        "--fix-once-similar-min",
        default=None,
        help="Settings.fix_once_similar_min of the store under test, or 'off' (default: the library's default)",
    )
    ap.add_argument(
        "--fix-instance-credits",
        choices=["on", "off"],
        default=None,
        help="Settings.fix_instance_credits of the store under test (default: the library's default)",
    )
    ap.add_argument(
        "--fix-task-share",
        type=float,
        default=None,
        help="Settings.fix_task_share of the store under test (default: the library's default)",
    )
    ap.add_argument(
        "--task",
        choices=["command", "run"],
        default="command",
        help="the task a harness gives: 'command' (the failed command as the title, on every teach and ask call; "
        "default) or 'run' (the issue's own protocol: the run's id as the title, learn_success/learn_error/learn_fix "
        "without a task)",
    )
    args = ap.parse_args(argv)
    global TASK
    TASK = args.task
    if args.fix_task_min is not None:
        SETTINGS["fix_task_min"] = None if args.fix_task_min == "off" else int(args.fix_task_min)
    if args.fix_origin_min is not None:
        SETTINGS["fix_origin_min"] = None if args.fix_origin_min == "off" else int(args.fix_origin_min)
    if args.fix_distinct_min is not None:
        SETTINGS["fix_distinct_min"] = None if args.fix_distinct_min == "off" else int(args.fix_distinct_min)
    if args.fix_recurrence:
        SETTINGS["fix_recurrence"] = True
    if args.fix_once_same_values:
        SETTINGS["fix_once_same_values"] = True
    if args.fix_task_share is not None:
        SETTINGS["fix_task_share"] = args.fix_task_share
    if args.fix_nearest_min is not None:
        SETTINGS["fix_nearest_min"] = None if args.fix_nearest_min == "off" else float(args.fix_nearest_min)
    if args.fix_nearest_margin is not None:
        SETTINGS["fix_nearest_margin"] = args.fix_nearest_margin
    if args.fix_once_similar_min is not None:
        SETTINGS["fix_once_similar_min"] = (
            None if args.fix_once_similar_min == "off" else float(args.fix_once_similar_min)
        )
    if args.fix_instance_credits is not None:
        SETTINGS["fix_instance_credits"] = args.fix_instance_credits == "on"
    if args.fix_similar_min is not None:
        SETTINGS["fix_similar_min"] = args.fix_similar_min
    if args.fix_similar_breadth is not None:
        SETTINGS["fix_similar_breadth"] = args.fix_similar_breadth
    if args.fix_general_min is not None:
        SETTINGS["fix_general_min"] = args.fix_general_min
    if args.teach == "learn_fix" and not hasattr(MemoryStore, "learn_fix"):
        print("--teach learn_fix: unavailable, this MemoryStore has no learn_fix()", file=sys.stderr)
        return 2
    data = data_dir(args.data) if {"agent-runs", "defects4j"} & set(args.sources) else None
    sources = load_sources(args.sources, data, args.sessions)
    t_all = time.perf_counter()
    import harness_memory

    print(
        f"fix recall replay: teach={args.teach} task={args.task} credit={'on' if args.credit else 'off'}"
        f"{' online' if args.online else ''}; library {Path(harness_memory.__file__).parent}\n"
    )
    with tempfile.TemporaryDirectory(prefix="fix-recall-") as tmp:
        for src in sources:
            asked, stats = replay(src, args.teach, credit=args.credit, online=False, db_dir=Path(tmp))
            print(report(src, asked, stats, f"{src.name} — teach {args.teach}, earlier 60% taught, later 40% asked"))
            print()
            if args.details:
                print(details(asked))
                print()
            if args.online and src.name != "defects4j":  # one task per bug: online teaching only adds distractors
                asked, stats = replay(src, args.teach, credit=args.credit, online=True, db_dir=Path(tmp))
                print(
                    report(
                        src, asked, stats, f"{src.name} — teach {args.teach}, online: asked runs taught after they end"
                    )
                )
                print()
    print(f"total {time.perf_counter() - t_all:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
