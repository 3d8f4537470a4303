"""Failure→repair pairs in command streams, defined mechanically (used by ``fix_recall.py``).

A *run* is ``{instance_id, repo, resolved, steps: [{command, returncode, output}]}`` (the
agent-runs format). Every step's command is parsed the same way:

1. **Lexing.** A small shell lexer: quotes, backslash escapes and line continuations,
   comments, operators ``&& || ; & |`` and newlines, redirections (``>``, ``>>``, ``2>&1``,
   ``&>``, ``<`` with their file word) and here-documents (``<<EOF … EOF``: the body is
   dropped; ``<<<`` here-strings too).
2. **Segments.** The command splits on ``&& || ; & newline`` into segments. In a pipeline
   only the first element that is not a feeder (``echo``, ``printf``, ``yes``, ``cat``)
   is kept: pipes into ``head``/``tail``/``grep``/... disappear. Redirections are dropped.
   Leading wrappers are stripped: environment assignments (``PYTHONPATH=.``), ``env``,
   ``timeout [-s SIG] N``, ``time``, ``nohup``, ``sudo``, ``stdbuf -oL``.
3. **Kinds.** A segment is ``cd`` (its directory is remembered), *setup* (``export``,
   ``source``, ``set``, ``unset``, installers: ``pip``/``pip3``/``python -m pip``,
   ``apt-get``, ``apt``, ``conda``, ``npm install``/``npm ci``, ``uv pip``), *edit or
   inspection* (``cat sed grep rg ls find echo printf head tail nl wc diff touch mkdir rm cp
   mv patch tee awk git chmod ...``, or any segment that writes a here-document into a file),
   or a *run*. The **main segment** is the last run segment. A step with no run segment is
   an edit/inspection/setup step: it is never a failure nor a repair.
4. **Targets** of the main segment (the job's identity):
   - ``python [flags] -m MOD ARGS`` / ``pytest ARGS`` / known test runners (``runtests.py``,
     ``manage.py``, ``bin/test``, ``pytest``, ``py.test``, ``nosetests``, ``python -m
     pytest|unittest|django|nose``): every positional argument is a test target (a file, a
     ``file::test`` node, a dotted label, a Django app label); flag values are not
     (``-k EXPR`` is a *selector*: a placeholder in the shape, not a target; a numeric word
     after a flag is that flag's value).
   - ``python SCRIPT ARGS`` (also ``bash|sh SCRIPT``, ``node SCRIPT``): the script file and
     any path-like argument.
   - any other program (``ruff``, ``black``, ``make``, ``npm``, ``gcc``, a ``./tool``):
     its path-like arguments (containing ``/``, starting with ``.``, or ending in a file
     extension), flag values included (``make -f proj/Makefile``); a program given as a
     path (``./build.sh``) is its own target when it has no other.
   - no target found: the directory of a preceding ``cd DIR`` (``cd webapp && npm test``);
     else the step has no target and can be asked but never paired.
   Each target is normalised to a key: leading ``./`` and the ``cd`` directory removed,
   ``.py`` dropped, ``/`` and ``::`` turned into ``.`` — so ``tests/test_x.py`` (pytest),
   ``tests.test_x`` (unittest) and ``./tests/test_x.py`` are the same target.
5. **Pair.** A failure (a run step with returncode ≠ 0) and the *first later step of the same
   run* with returncode 0 whose target keys intersect the failure's. That step is the
   *repair*. A failure with targets but no such step, or with no target, is a failure
   *without repair*.
6. **Shape** of a command: its kept segments (``cd``, ``export`` and edit/inspection
   segments left out, wrappers, env, redirections and filter pipes stripped) joined by
   ``&&``; in every segment each target word — and each ``-k`` selector — becomes
   ``<target>`` (adjacent placeholders merge); the interpreter ``python``/``python3``/
   ``/any/path/python3`` is written ``python`` (an explicit minor version such as
   ``python3.11`` is kept); program paths lose a leading ``./`` or the ``cd`` directory.
   ``pytest tests/a.py -x`` → ``pytest <target> -x``; ``cd /testbed && PYTHONPATH=.
   timeout 60 ./tests/runtests.py delete 2>&1 | tail -5`` → ``tests/runtests.py <target>``;
   ``pip install pyyaml && python app.py`` → ``pip install pyyaml && python <target>``.
   A returned fix is a HIT when ``shape(fix text) == shape(true repair)``.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Parsed",
    "Failure",
    "parse",
    "shape",
    "targets",
    "extract_failures",
    "load_runs",
    "instance_number",
    "truncate_output",
    "wrap_output",
]

# ---------------------------------------------------------------------------------------------
# lexing

_OPS = ("&&", "||", ";;", ";", "&", "|", "(", ")")


@dataclass
class _Tok:
    kind: str  # "word" | "op" | "redir" | "nl"
    text: str


def _lex(cmd: str) -> list[_Tok]:
    """Tokens of a shell command; here-document bodies are skipped."""
    toks: list[_Tok] = []
    i, n = 0, len(cmd)
    pending_heredocs: list[tuple[str, bool]] = []
    buf: list[str] = []
    in_word = False

    def flush():
        nonlocal buf, in_word
        if in_word:
            toks.append(_Tok("word", "".join(buf)))
        buf, in_word = [], False

    while i < n:
        c = cmd[i]
        if c == "\\" and i + 1 < n:
            if cmd[i + 1] == "\n":  # line continuation
                i += 2
                continue
            buf.append(cmd[i + 1])
            in_word = True
            i += 2
            continue
        if c == "'":
            j = cmd.find("'", i + 1)
            j = n if j < 0 else j
            buf.append(cmd[i + 1 : j])
            in_word = True
            i = j + 1
            continue
        if c == '"':
            j = i + 1
            part = []
            while j < n and cmd[j] != '"':
                if cmd[j] == "\\" and j + 1 < n and cmd[j + 1] in '"\\$`\n':
                    part.append(cmd[j + 1])
                    j += 2
                    continue
                part.append(cmd[j])
                j += 1
            buf.append("".join(part))
            in_word = True
            i = j + 1
            continue
        if c == "#" and not in_word:
            j = cmd.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "\n":
            flush()
            toks.append(_Tok("nl", "\n"))
            i += 1
            for delim, strip_tabs in pending_heredocs:  # skip the bodies
                while i < n:
                    j = cmd.find("\n", i)
                    line = cmd[i : (n if j < 0 else j)]
                    i = n if j < 0 else j + 1
                    if (line.lstrip("\t") if strip_tabs else line).strip() == delim:
                        break
            pending_heredocs = []
            continue
        if c in " \t\r":
            flush()
            i += 1
            continue
        # redirections: [n]> [n]>> &> >& [n]>&m < << <<- <<<
        m = None
        if c in "<>" or (c == "&" and cmd.startswith("&>", i)) or (c.isdigit() and not in_word):
            m = re.match(r"(\d*)(<<<|<<-|<<|&>>|&>|>>|>&|<&|>\||>|<)(&?\d+|-)?", cmd[i:])
        if m:
            flush()
            op = m.group(2)
            i += m.end()
            if m.group(3) is not None:  # 2>&1, >&2: no file word
                toks.append(_Tok("redir", m.group(0)))
                continue
            # the file / delimiter word
            while i < n and cmd[i] in " \t":
                i += 1
            j = i
            word = []
            while j < n and cmd[j] not in " \t\n;&|()<>":
                if cmd[j] in "'\"":
                    q = cmd[j]
                    k = cmd.find(q, j + 1)
                    k = n if k < 0 else k
                    word.append(cmd[j + 1 : k])
                    j = k + 1
                    continue
                word.append(cmd[j])
                j += 1
            i = j
            target = "".join(word)
            if op in ("<<", "<<-"):
                pending_heredocs.append((target, op == "<<-"))
                toks.append(_Tok("redir", "<<"))
            elif op == "<<<":
                toks.append(_Tok("redir", "<<<"))
            else:
                toks.append(_Tok("redir", op + " " + target))
            continue
        op = next((o for o in _OPS if cmd.startswith(o, i)), None)
        if op and not (op == "&" and cmd.startswith("&>", i)):
            flush()
            toks.append(_Tok("op", op))
            i += len(op)
            continue
        buf.append(c)
        in_word = True
        i += 1
    flush()
    return toks


# ---------------------------------------------------------------------------------------------
# segments

EDIT = {
    "cat",
    "sed",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ls",
    "find",
    "echo",
    "printf",
    "head",
    "tail",
    "nl",
    "wc",
    "diff",
    "cmp",
    "touch",
    "mkdir",
    "rmdir",
    "rm",
    "cp",
    "mv",
    "patch",
    "tee",
    "awk",
    "gawk",
    "less",
    "more",
    "stat",
    "file",
    "which",
    "whereis",
    "pwd",
    "true",
    "false",
    ":",
    "chmod",
    "chown",
    "ln",
    "sort",
    "uniq",
    "cut",
    "tr",
    "git",
    "vi",
    "vim",
    "nano",
    "ed",
    "tree",
    "du",
    "df",
    "ps",
    "kill",
    "sleep",
    "whoami",
    "id",
    "type",
    "command",
    "readlink",
    "realpath",
    "basename",
    "dirname",
    "xargs",
    "date",
    "hostname",
    "uname",
    "clear",
    "history",
    "test",
    "[",
    "[[",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "md5sum",
    "sha256sum",
    "tar",
    "unzip",
    "zip",
    "gzip",
    "gunzip",
    "curl",
    "wget",
    "jq",
    "column",
    "fold",
    "fmt",
    "rev",
    "seq",
    "yes",
    "applypatch",
    "dos2unix",
    "locate",
    "man",
    "help",
    "alias",
    "exit",
    "return",
    "wait",
    "jobs",
    "read",
    "printenv",
    "cd",
    "pushd",
    "popd",
    "dirs",
}
SETUP = {
    "export",
    "source",
    ".",
    "set",
    "unset",
    "pip",
    "pip3",
    "apt-get",
    "apt",
    "conda",
    "mamba",
    "micromamba",
    "brew",
    "ulimit",
    "umask",
    "shopt",
    "trap",
    "declare",
    "local",
    "eval",
}
WRAPPERS = {"env", "time", "nohup", "sudo", "nice", "command", "exec"}
FEEDERS = {"echo", "printf", "yes", "cat"}
TEST_RUNNER_MODULES = {"pytest", "unittest", "django", "nose", "nose2", "tox", "green", "xmlrunner"}
TEST_RUNNER_PROGS = {
    "pytest",
    "py.test",
    "nosetests",
    "nose2",
    "tox",
    "runtests.py",
    "runtests",
    "manage.py",
    "bin/test",
    "test",
}  # "test" only as a path (bin/test), see _is_runner_prog
_PY = re.compile(r"^(?:.*/)?python(\d(?:\.\d+)?)?[mw]?$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}$")
_PY_VALUE_FLAGS = {"-W", "-X", "-Q"}
_RUNNER_VALUE_FLAGS = {
    "-k",
    "-m",
    "-W",
    "-p",
    "-c",
    "-o",
    "--tb",
    "-n",
    "--settings",
    "--parallel",
    "--verbosity",
    "-r",
    "--maxfail",
    "--durations",
    "--timeout",
    "--rootdir",
    "--deselect",
    "--ignore",
    "--junitxml",
    "--basetemp",
    "--log-level",
    "--color",
    "--import-mode",
    "--confcutdir",
    "--capture",
    "-x-",
    "--exclude-tag",
    "--tag",
    "--pattern",
    "-P",
    "--start-at",
    "--start-after",
    "--top-level-directory",
    "-t",
    "-s",
}
SELECTOR_FLAGS = {"-k"}


def _strip_wrappers(words: list[str]) -> list[str]:
    w = list(words)
    while w:
        if _ASSIGN.match(w[0]):
            w.pop(0)
        elif w[0] in WRAPPERS:
            w.pop(0)
            while w and w[0].startswith("-"):  # env -i, nice -n 5 ...
                flag = w.pop(0)
                if flag in ("-n", "-u") and w:
                    w.pop(0)
        elif w[0] == "timeout":
            w.pop(0)
            while w and w[0].startswith("-"):
                flag = w.pop(0)
                if flag in ("-s", "-k", "--signal", "--kill-after") and w:
                    w.pop(0)
            if w and re.match(r"^\d+(\.\d+)?[smhd]?$", w[0]):
                w.pop(0)
        elif w[0] == "stdbuf":
            w.pop(0)
            while w and w[0].startswith("-"):
                w.pop(0)
        elif w[0] == "xvfb-run":
            w.pop(0)
            while w and w[0].startswith("-"):
                w.pop(0)
        else:
            break
    return w


def _is_pathlike(word: str) -> bool:
    if not word or word.startswith("-") or "=" in word or word.startswith("<"):
        return False
    if "/" in word or word.startswith("."):
        return True
    base = word.split("::", 1)[0]
    return bool(_EXT.search(base)) and not re.match(r"^\d+(\.\d+)*$", base)


def _is_runner_prog(prog: str) -> bool:
    base = prog.rsplit("/", 1)[-1]
    if base == "test":
        return "/" in prog  # bin/test, ./bin/test (not the shell builtin `test`)
    return base in TEST_RUNNER_PROGS


@dataclass
class Segment:
    words: list[str]
    kind: str  # "cd" | "setup" | "edit" | "run"
    writes_file: bool = False
    heredoc: bool = False


def _segments(cmd: str) -> list[Segment]:
    toks = _lex(cmd)
    out: list[Segment] = []
    pipeline: list[tuple[list[str], bool, bool]] = []  # (words, writes_file, heredoc)
    cur: list[str] = []
    writes = heredoc = False

    def end_element():
        nonlocal cur, writes, heredoc
        if cur or writes or heredoc:
            pipeline.append((cur, writes, heredoc))
        cur, writes, heredoc = [], False, False

    def end_segment():
        end_element()
        if pipeline:
            # the first element that is not a feeder (echo ... | python); else the first
            chosen = next(
                (p for p in pipeline if _strip_wrappers(p[0])[:1] and _strip_wrappers(p[0])[0] not in FEEDERS),
                pipeline[0],
            )
            words = _strip_wrappers(chosen[0])
            w_file = any(p[1] for p in pipeline)
            hd = any(p[2] for p in pipeline)
            out.append(Segment(words, _kind(words, w_file and hd), writes_file=w_file, heredoc=hd))
        pipeline.clear()

    for t in toks:
        if t.kind == "word":
            cur.append(t.text)
        elif t.kind == "redir":
            if t.text.startswith("<<"):
                heredoc = True
            elif t.text[0] in ">&" or t.text[:1].isdigit():
                target = t.text.split(" ", 1)[1] if " " in t.text else ""
                if target and target != "/dev/null" and not target.startswith("&"):
                    writes = True
        elif t.kind == "op" and t.text == "|":
            end_element()
        elif t.kind == "op" and t.text in ("(", ")"):
            continue
        else:  # && || ; & newline
            end_segment()
    end_segment()
    return out


def _kind(words: list[str], heredoc_write: bool) -> str:
    if not words:
        return "edit" if heredoc_write else "setup"
    prog = words[0]
    base = prog.rsplit("/", 1)[-1]
    if base in ("cd", "pushd"):
        return "cd"
    if heredoc_write:
        return "edit"
    if base in SETUP:
        return "setup"
    if _PY.match(base) and len(words) >= 3 and words[1] == "-m" and words[2] in ("pip", "ensurepip", "venv"):
        return "setup"
    if base in ("npm", "pnpm", "yarn") and len(words) >= 2 and words[1] in ("install", "i", "ci", "add"):
        return "setup"
    if base == "uv" and len(words) >= 2 and words[1] in ("pip", "venv", "add", "sync"):
        return "setup"
    if base in EDIT:
        return "edit"
    return "run"


# ---------------------------------------------------------------------------------------------
# targets and shapes


def _target_positions(words: list[str]) -> tuple[set[int], set[int], int]:
    """Indexes of target words and of selector words of a run segment, and how many leading
    words name the program (for program-path normalisation)."""
    prog = words[0]
    base = prog.rsplit("/", 1)[-1]
    targets: set[int] = set()
    selectors: set[int] = set()
    if _PY.match(base) or base in ("bash", "sh", "zsh", "node", "ruby", "perl", "Rscript", "php", "deno", "bun"):
        i = 1
        while i < len(words) and words[i].startswith("-") and words[i] not in ("-m", "-c", "-"):
            if words[i] in _PY_VALUE_FLAGS and i + 1 < len(words):
                i += 1
            i += 1
        if i >= len(words):
            return targets, selectors, 1
        if words[i] == "-m" and i + 1 < len(words):
            mod = words[i + 1]
            runner = mod.split(".")[0] in TEST_RUNNER_MODULES
            _args(words, i + 2, runner, targets, selectors)
            return targets, selectors, i + 2
        if words[i] in ("-c", "-"):
            if words[i] == "-c" and i + 1 < len(words):
                selectors.add(-(i + 1) - 1)  # inline code (encoded negative): <code>, never a target
                _args(words, i + 2, False, targets, selectors)
            return targets, selectors, i + 1
        script = words[i]
        if script.rsplit("/", 1)[-1] == "manage.py":
            _manage_py(words, i + 1, targets, selectors)
            return targets, selectors, i + 1
        if _is_runner_prog(script):
            _args(words, i + 1, True, targets, selectors)
            return targets, selectors, i + 1
        targets.add(i)
        _args(words, i + 1, False, targets, selectors)
        return targets, selectors, i
    runner = _is_runner_prog(prog)
    _args(words, 1, runner, targets, selectors)
    if not targets and ("/" in prog or prog.startswith(".")) and not runner:
        targets.add(0)
    return targets, selectors, 1


def _manage_py(words: list[str], start: int, targets: set[int], selectors: set[int]) -> None:
    """``manage.py test LABELS``: the labels (or ``test`` alone); ``manage.py SUBCOMMAND ARGS``:
    the subcommand and its positional arguments."""
    sub = next((k for k in range(start, len(words)) if not words[k].startswith("-")), None)
    if sub is None:
        return
    before = len(targets)
    _args(words, sub + 1, True, targets, selectors)
    if words[sub] != "test" or len(targets) == before:
        targets.add(sub)


def _args(words: list[str], start: int, runner: bool, targets: set[int], selectors: set[int]) -> None:
    i = start
    while i < len(words):
        w = words[i]
        if w.startswith("-") and len(w) > 1:
            if "=" in w:
                if not runner and _is_pathlike(w.split("=", 1)[1]):
                    pass  # --config=path stays in the shape: a setting, not a job
                i += 1
                continue
            nxt = words[i + 1] if i + 1 < len(words) else None
            if nxt is not None and not nxt.startswith("-"):
                if w in SELECTOR_FLAGS:
                    selectors.add(i + 1)
                    i += 2
                    continue
                if re.match(r"^\d+$", nxt) or (runner and w in _RUNNER_VALUE_FLAGS):
                    i += 2
                    continue
                if not runner and w in ("-C", "-f", "--prefix", "--file", "--directory", "-o") and _is_pathlike(nxt):
                    targets.add(i + 1)
                    i += 2
                    continue
            i += 1
            continue
        if runner or _is_pathlike(w):
            targets.add(i)
        i += 1


def _norm_key(word: str, cd: str | None) -> str:
    w = word.strip()
    if cd and w.startswith(cd.rstrip("/") + "/"):
        w = w[len(cd.rstrip("/")) + 1 :]
    while w.startswith("./"):
        w = w[2:]
    w = w.rstrip("/")
    node = ""
    if "::" in w:
        w, node = w.split("::", 1)
    if w.endswith(".py"):
        w = w[:-3]
    w = w.replace("/", ".")
    if node:
        w = w + "." + node.replace("::", ".")
    return w


def _norm_prog(word: str, cd: str | None) -> str:
    base = word.rsplit("/", 1)[-1]
    m = _PY.match(base)
    if m:
        ver = m.group(1)
        return f"python{ver}" if ver and "." in ver else "python"
    w = word
    if cd and w.startswith(cd.rstrip("/") + "/"):
        w = w[len(cd.rstrip("/")) + 1 :]
    while w.startswith("./"):
        w = w[2:]
    return w


@dataclass
class Parsed:
    command: str
    kind: str  # "run" or "edit" (no run segment: edit, inspection or setup only)
    targets: frozenset[str] = frozenset()
    shape: str = ""
    main_words: list[str] = field(default_factory=list)


def parse(command: str) -> Parsed:
    segs = _segments(command)
    cd = None
    cds: list[str | None] = []
    for s in segs:
        if s.kind == "cd":
            cd = s.words[1] if len(s.words) > 1 else None
        cds.append(cd)
    run_idx = [k for k, s in enumerate(segs) if s.kind == "run"]
    if not run_idx:
        return Parsed(command, "edit", shape=" && ".join(" ".join(s.words) for s in segs if s.words))
    main = run_idx[-1]
    mcd = cds[main]
    tpos, spos, nprog = _target_positions(segs[main].words)
    words = segs[main].words
    keys = {_norm_key(words[i], mcd) for i in tpos}
    if not keys and mcd:
        keys = {_norm_key(mcd, None)}
    target_words = {words[i] for i in tpos}
    parts = []
    for k, s in enumerate(segs):
        if s.kind in ("cd", "edit") or not s.words:
            continue
        if s.kind == "setup" and s.words[0] in (
            "export",
            "set",
            "unset",
            "source",
            ".",
            "ulimit",
            "umask",
            "shopt",
            "trap",
            "declare",
            "local",
            "eval",
        ):
            continue
        if k == main:
            t_here, s_here = tpos, spos
        else:
            t_here = {i for i, w in enumerate(s.words) if w in target_words}
            s_here = {x for x in (_target_positions(s.words)[1] if s.kind == "run" else ()) if x < 0}
        codes = {-x - 1 for x in s_here if x < 0}
        out: list[str] = []
        for i, w in enumerate(s.words):
            if i in codes:
                out.append("<code>")
            elif i in t_here or i in s_here:
                if not out or out[-1] != "<target>":
                    out.append("<target>")
            elif i == 0 or (k == main and i < nprog and i not in t_here):
                out.append(_norm_prog(w, cds[k]) if (i == 0 or not w.startswith("-")) else w)
            else:
                out.append(w)
        parts.append(" ".join(out))
    return Parsed(command, "run", frozenset(x for x in keys if x), " && ".join(parts), list(words))


def shape(command: str) -> str:
    """The command with its targets replaced by ``<target>``, wrappers, env, cd, redirections and
    filter pipes stripped (see the module docstring)."""
    return parse(command).shape


def targets(command: str) -> frozenset[str]:
    return parse(command).targets


# ---------------------------------------------------------------------------------------------
# failures and pairs


@dataclass
class Failure:
    run_id: str  # "<instance_id>#<step>"
    instance_id: str
    repo: str
    order: int  # position of the run in its repository's history
    step: int
    command: str
    output: str
    failed_shape: str
    targets: frozenset[str]
    repair: str | None = None  # the repair command, or None
    repair_shape: str | None = None
    repair_step: int | None = None


def extract_failures(run: dict, order: int = 0) -> list[Failure]:
    """Every failed run step of one run, each with its repair (or none), in step order."""
    steps = run["steps"]
    parsed = [parse(s.get("command") or "") for s in steps]
    out = []
    for i, (s, p) in enumerate(zip(steps, parsed)):
        if s.get("returncode", 0) == 0 or p.kind != "run":
            continue
        f = Failure(
            f"{run['instance_id']}#{i}",
            run["instance_id"],
            run.get("repo", ""),
            order,
            i,
            s["command"],
            s.get("output") or "",
            p.shape,
            p.targets,
        )
        if p.targets:
            for j in range(i + 1, len(steps)):
                q = parsed[j]
                if steps[j].get("returncode", 1) == 0 and q.kind == "run" and q.targets & p.targets:
                    f.repair, f.repair_shape, f.repair_step = steps[j]["command"], q.shape, j
                    break
        out.append(f)
    return out


def instance_number(instance_id: str) -> tuple[int, str]:
    m = re.search(r"(\d+)\D*$", instance_id)
    return (int(m.group(1)) if m else 0, instance_id)


def load_runs(path: Path | str) -> list[dict]:
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# ---------------------------------------------------------------------------------------------
# outputs as the agent harness shows them (used to record scripted sessions)

_WARNING = (
    "<warning>\nThe output of your last command was too long.\nPlease try a different command that produces "
    "less output.\nIf you're looking at a file you can try use head, tail or sed to view a smaller number of "
    "lines selectively.\nIf you're using grep or find and it produced too much output, you can use a more "
    "selective search pattern.\nIf you really need to see something from the full command's output, you can "
    "redirect output to a file and then search in that file.\n</warning>"
)


def truncate_output(text: str, limit: int = 10_000, keep: int = 5_000) -> str:
    """``<output>…</output>``, or head and tail with the harness's warning when longer than ``limit``
    (the format of mini-swe-agent, the agent of the agent-runs data)."""
    if len(text) < limit:
        return f"<output>\n{text}</output>"
    return (
        f"{_WARNING}<output_head>\n{text[:keep]}\n</output_head>\n<elided_chars>\n{len(text) - 2 * keep} "
        f"characters elided\n</elided_chars>\n<output_tail>\n{text[-keep:]}\n</output_tail>"
    )


wrap_output = truncate_output


def iter_pairs(failures: Iterable[Failure]) -> Iterable[Failure]:
    return (f for f in failures if f.repair is not None)
