"""The hand-labelled corpus of real failing CI logs (tests/fixtures/ci_logs, see its README):
one test per log family, plus the in-sample targets on the development split. The held-out
splits are in the family tests only; their figures are reported by benchmarks/ci_logs.py. A split
that is still held out (no rule written against its misses yet) is measured, not asserted: its logs
are in every check but the per-family hit count, which would otherwise ask for tuning on it."""

from __future__ import annotations

import collections
import gzip
import json
import re
from pathlib import Path

import pytest

from harness_memory import MemoryStore

CORPUS = Path(__file__).parent / "fixtures" / "ci_logs"
LABELS = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
FAMILIES = sorted({v["family"] for v in LABELS.values()})
# splits whose first-look misses are reported (tests/fixtures/ci_logs/README.md), not asserted; a
# split leaves this set once rules are written against its misses (it is then in-sample). heldout5 left it
# on 2026-11-26, after the rules for its seven classes of misses (its first look, 0.816 / 0.553, stays its
# held-out figure). heldout6 entered it on 2026-11-26 with its logs, before its one measured run, and left
# it the same day after signing method 7's rules for its seven classes (its first look, 1.000 / 0.649,
# stays its held-out figure). heldout7 entered it on 2026-11-26 with its logs, before its one measured run,
# and left it the same day after signing method 9's rules for its classes (its first look, 0.939 / 0.455,
# stays its held-out figure). heldout8 entered it on 2026-11-26 with its logs, before its one measured run,
# and left it the same day after signing method 11's rules for its classes (its first look, 0.828 / 0.517,
# stays its held-out figure). heldout9 entered it on 2026-11-26 with its logs, before its one measured run, and
# left it the same day after signing method 12's rules for its classes (its first look, 0.964 / 0.607 with the
# learned fallback, 0.536 without, stays its held-out figure). heldout10 entered it on 2026-11-26 with its logs,
# before its one measured run, and left it the same day after signing method 13's rules for its classes (its first
# look, 0.968 / 0.806 with the learned fallback, 0.774 without, stays its held-out figure). heldout11 entered it on
# 2026-11-27 with its logs, before its one measured run, and left it the same day after the excerpt rules for its
# classes (its first look, 0.941 / 0.471 with the learned fallback, 0.441 without, stays its held-out figure).
# heldout12 entered it on 2026-11-27 with its logs, before its one measured run, and left it the same day after signing
# method 22's rules for its classes (its first look, 0.900 / 0.400 with the learned fallback, 0.333 without, stays its
# held-out figure). heldout13 entered it on 2026-11-27 with its logs, before its one measured run, and left it the same
# day after signing method 24's excerpt rules for its classes (its first look, 0.788 / 0.455 with the learned fallback,
# 0.424 without, stays its held-out figure); its categories were left to the category rules' own round, so it is in
# EXCERPT_EXACT_SPLITS below, not in EXACT_SPLITS. heldout14 entered it on 2026-11-27 with its logs, before its one
# measured run. heldout15 entered it on 2026-11-27 with its logs, before its one measured run. heldout16 entered it on
# 2026-11-27 with its logs, before its one measured run. heldout17 entered it on 2026-11-27 with its logs, before its one
# measured run. heldout18 entered it on 2026-11-27 with its logs, before its one measured run. heldout19 entered it on
# 2026-11-27 with its logs, before its one measured run. heldout20 entered it on 2026-11-27 with its logs, before its one
# measured run. heldout21 entered it on 2026-11-28 with its logs, before its one measured run, and left it the same day
# after signing method 43's rules for its classes (its first look, 0.912 / 0.559 with the learned fallback, 0.500
# without, stays its held-out figure); four of its categories are left (debatable or the script's own line, README), so
# it is in EXCERPT_EXACT_SPLITS below, not in EXACT_SPLITS. heldout22 entered it on 2026-11-28 with its logs, before its
# one measured run, and left it the same day after signing method 44's rules for its classes (its first look, 1.000 /
# 0.656 with the learned fallback, 0.562 without, stays its held-out figure); four debatable categories are left, so it
# is in EXCERPT_EXACT_SPLITS too. heldout23 entered it on 2026-11-28 with its logs, before its one measured run, and
# left it on 2026-11-28 after signing method 45's rules for its classes (its first look, 0.933 / 0.767 with the learned
# fallback, 0.667 without, stays its held-out figure); every log of it is now signed as labelled, so it is in
# EXACT_SPLITS below. heldout24 entered it on 2026-11-28 with its logs, before its one measured run. heldout25 entered it
# on 2026-11-28 with its logs, before its one measured run. Both left it the same day after signing method 46's rules
# for their classes (their first looks, heldout24 0.857 / 0.486 with the learned fallback, 0.400 without, heldout25
# 0.769 / 0.513 and 0.385, stay their held-out figures); heldout24's excerpts are all cut as marked now, so it is in
# EXCERPT_EXACT_SPLITS; the debatable categories of both (README) are left. heldout26 entered it on 2026-11-28 with its
# logs, before its one measured run. heldout27 entered it on 2026-11-28 with its logs, before its one measured run. Both
# left it the same day after signing method 47's rules for their classes (their first looks at method 46, heldout26
# 0.971 / 0.735 with the learned fallback, 0.676 without, heldout27 0.939 / 0.758 and 0.667, stay their held-out
# figures); heldout26 has every excerpt cut as marked now, so it is in EXCERPT_EXACT_SPLITS; heldout27's one excerpt
# left is a pytest chain whose root cause (`KeyError`) the excerpt keeps by design (the label marks the exception raised
# from it); their debatable categories (README) are left. heldout28 entered it on 2026-11-28 with its logs, before its
# one measured run. heldout29 entered it on 2026-11-28 with its logs, before its one measured run. Both left it the same
# day after signing method 48's rules for their classes (their first looks at method 47, heldout28 0.949 / 0.795 with
# the learned fallback, 0.744 without, heldout29 0.893 / 0.500 and 0.464, stay their held-out figures); their
# debatable categories and three excerpts (README) are left. heldout30 entered it on 2026-11-28 with its logs, before its one
# measured run. heldout31 entered it on 2026-11-28 with its logs, before its one measured run
STILL_HELD_OUT: set[str] = {
    "heldout14",
    "heldout15",
    "heldout16",
    "heldout17",
    "heldout18",
    "heldout19",
    "heldout20",
    "heldout30",
    "heldout31",
}


def _text(rel: str) -> str:
    data = (CORPUS / rel).read_bytes()
    if rel.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def _hit(span, marks) -> bool:
    return span is not None and any(span[0] <= hi and lo <= span[1] for lo, hi in marks)


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    with MemoryStore(tmp_path_factory.mktemp("corpus") / "m.db") as s:
        yield {rel: s.error_signature(_text(rel)) for rel in LABELS}


# logs whose label marks another line than the one the library takes by a design a test pins, each said in the corpus
# README: Test::More's diagnostic (`#   Failed test 'x'` and is_deeply's report, printed before its `not ok` line) is
# marked, where the excerpt is the `not ok` line and the diagnostic its category's evidence (tests/
# test_unseen_failure_rules.py, the TAP failure that takes the diagnostic naming it earlier); a pytest chain whose
# `KeyError` root the excerpt keeps (tests/test_unseen_failure_rules.py, a failure chained from a real cause) while the
# label marks the exception raised from it
BY_DESIGN = {"perl/prove_is_deeply_structures_buildkite.log", "pytest/jsonpointer_member_not_found_github_actions.log"}


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_finds_the_marked_failure(signed, family):
    logs = [rel for rel, v in LABELS.items() if v["family"] == family]
    counted = [rel for rel in logs if LABELS[rel]["split"] not in STILL_HELD_OUT and rel not in BY_DESIGN]
    hits = [_hit(signed[rel].excerpt_lines, LABELS[rel]["lines"]) for rel in counted]
    # at most one miss in a family (a family has 3 to 9 logs)
    assert sum(hits) >= len(hits) - 1, [rel for rel, h in zip(counted, hits) if not h]
    for rel in logs:  # every excerpt is a bounded block with a real span
        lo, hi = signed[rel].excerpt_lines
        assert 1 <= lo <= hi and hi - lo < 12 and len(signed[rel].excerpt) <= 2000


# splits whose rules were written after their one measured run (in-sample since): every log of them is signed
# from its marked lines with its labelled category, not only "at most one miss a family"
EXACT_SPLITS = ("heldout9", "heldout10", "heldout11", "heldout12", "heldout23")


@pytest.mark.parametrize(
    ("split", "family"), sorted({(v["split"], v["family"]) for v in LABELS.values() if v["split"] in EXACT_SPLITS})
)
def test_each_family_of_a_split_written_against_is_signed_as_labelled(signed, split, family):
    for rel, lab in LABELS.items():
        if lab["split"] != split or lab["family"] != family:
            continue
        sig = signed[rel]
        lo, hi = sig.excerpt_lines
        assert any(lo <= e and s <= hi for s, e in lab["lines"]), (rel, sig.excerpt_lines, lab["lines"])
        assert sig.category == lab["category"], (rel, sig.category, lab["category"])


# splits whose excerpt rules (not yet their category words) were written after their one measured run: every log of
# them is signed from its marked lines
EXCERPT_EXACT_SPLITS = ("heldout13", "heldout21", "heldout22", "heldout24", "heldout26")


@pytest.mark.parametrize(
    ("split", "family"),
    sorted({(v["split"], v["family"]) for v in LABELS.values() if v["split"] in EXCERPT_EXACT_SPLITS}),
)
def test_each_family_of_a_split_whose_excerpts_were_written_against_is_cut_as_marked(signed, split, family):
    for rel, lab in LABELS.items():
        if lab["split"] == split and lab["family"] == family:
            lo, hi = signed[rel].excerpt_lines
            assert any(lo <= e and s <= hi for s, e in lab["lines"]), (rel, signed[rel].excerpt_lines, lab["lines"])


def test_development_split_targets(signed):
    dev = [rel for rel, v in LABELS.items() if v["split"] == "dev"]
    hit = sum(_hit(signed[r].excerpt_lines, LABELS[r]["lines"]) for r in dev) / len(dev)
    cat = sum(signed[r].category == LABELS[r]["category"] for r in dev) / len(dev)
    assert hit >= 0.95 and cat >= 0.85, (hit, cat)


def test_no_family_is_signed_from_an_echoed_command_or_a_config_word(signed):
    by = collections.Counter()
    for rel, sig in signed.items():
        msg = sig.message.lstrip()
        if msg.startswith(("+ ", "$ ", "> git")) or "# timeout=" in msg:
            by[rel] += 1
    assert not by, by


# the runners' own lines, per wrapper (heldout13's README section): a runner's clone step, script echoes, exit-code
# trailer and test-report teardown say nothing about why the job failed, so no excerpt starts on one of them
RUNNER_OWN_LINES = {
    "drone": re.compile(
        r"^\[clone:L\d+:\d+s\] |^\[\w+:L\d+:\d+s\] \+ |^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d drone_step_\d+ : exit code"
    ),
    "tekton": re.compile(r"^\[fetch-source : clone\] |^\[[\w-]+ : [\w-]+\] \+ "),
    "bitbucket": re.compile(
        r"^Images used:|^    build : |^\+ |^Cloning into |^HEAD is now at |^Searching for test report files|"
        r"^Finished scanning for test reports|^Merged test suites, total number tests is"
    ),
    # heldout14's README section: act's own lines (its start, docker and step lines, the failed step's closing lines);
    # Concourse's are not listed here: its closing `failed` line was an excerpt of heldout14's first run (class 2)
    "act": re.compile(
        r"^\[[\w.-]+/[\w.-]+\] (?:🚀  Start|  🐳  docker|⭐ Run |  ✅  Success|  ❌  Failure|exitcode '|🏁  Job)"
    ),
    # heldout15's README section (added after its one first run, which started no excerpt on one of them): GoCD's agent
    # lines (`[go] Task: <cmd>`, `[go] Task status: failed, ...`, `[go] Current job status: failed`, ...) and
    # Woodpecker's clone step, echoed commands, workflow header/closing lines and the CLI's closing `FTL` line
    "gocd": re.compile(r"^\d\d:\d\d:\d\d\.\d{3} \[go\] "),
    "woodpecker": re.compile(
        r"^\[(?:[\w.-]+/)?clone:L\d+:\d+s\] |^\[(?:[\w.-]+/)?[\w.-]+:L\d+:\d+s\] \+ |^# [\w.-]+(?:: \w+)?$"
        r"|^step [\w.-]+: exit code \d+$|^\d{1,2}:\d\d[AP]M FTL "
    ),
    # heldout16's README section (added after its one first run): Semaphore's agent events (`job_started`, `cmd_started`,
    # `cmd_finished`) and the output of its own commands (`Exporting <VARIABLE>`, the checkout lines); Earthly's
    # `buildkitd |`, `context |`, `internal |` and `+base |` lines, its `--> RUN <cmd>` echoes and the failed step's
    # `Command /bin/sh -c ... failed` and `ERROR: Command exited` lines. Not listed: Semaphore's closing `job_finished`
    # event and Earthly's closing `Error: solve side effects: ...` line, which were excerpts of that first run (class 1)
    "semaphore": re.compile(
        r'^\{"event":"(?:job_started|cmd_started|cmd_finished)"'
        r'|^\{"event":"cmd_output","timestamp":\d+,"output":"(?:Exporting [A-Z_]+\\n|Performing shallow clone|'
        r"Cloning into |HEAD is now at )"
    ),
    "earthly": re.compile(
        r"^(?:buildkitd|context|internal|\+base) \| |^\+[\w-]+ \| (?:\*cached\* )?--> "
        r"|^\+[\w-]+ \| Command /bin/sh -c |^\+[\w-]+ \| \+[\w-]+ \| ERROR: Command exited with non-zero code"
    ),
    # heldout17's README section (added after its one first run): Argo Workflows' submit/`argo logs`/`argo get` command
    # lines, `argo get`'s header fields and column heads, its succeeded (`✔`) step rows, the checkout pod's lines and the
    # pods' `+ <cmd>` echoes; Cirrus CI's instruction names, clone lines, `$ <cmd>` echoes and closing `Exit status: N`.
    # Not listed: `argo get`'s failed (`✖`) rows, whose top row was an excerpt of that first run (class 1)
    "argo": re.compile(
        r"^Workflow [\w-]+ submitted$|^argo (?:logs|get) [\w-]+ |^(?:Name|Namespace|ServiceAccount|Status|Message|Created"
        r"|Started|Finished|Duration|Progress): |^STEP +TEMPLATE +PODNAME|^ [├└]─+✔ |^[\w-]+-checkout-\d+: |^[\w-]+-\d+: \+ "
    ),
    "cirrus": re.compile(
        r"^(?:clone|\w+_script)$|^Using built-in Git\.\.\.$|^Limiting clone depth|^Cloning refs/"
        r"|^(?:Enumerating|Counting|Compressing) objects: |^Total \d+ \(delta |^HEAD is at [0-9a-f]{40}\.$|^\$ |^Exit status: \d+$"
    ),
    # heldout18's README section (added after its one first run, on which no excerpt started on any of these): Harness
    # CI's step lines (`Starting step: ...`, `Step completed|failed: ...`), the `+ <cmd>` echoes and its closing
    # `1 error occurred:` / `\t* exit status N`; OneDev's `HH:MM:SS ` lines of its own (resource allocation, job and
    # step status, the checkout, `+ <cmd>` echoes, `Command exited with code N`, `Job finished`)
    "harness": re.compile(
        r"^Starting step: |^Step (?:completed|failed): |^\+ |^1 error occurred:$|^\t\* exit status \d+$"
    ),
    "onedev": re.compile(
        r"^\d\d:\d\d:\d\d (?:Pending resource allocation|Executing job |Running step \"|Step \"[^\"]+\" is (?:successful|failed)$"
        r"|Retrieving source code|Initialized empty Git repository|Checking out [0-9a-f]{40}|\+ |Command exited with code \d+$"
        r"|Job finished$)"
    ),
    # heldout19's README section (added after its one first run, on which no excerpt started on any of these): Zuul's
    # job-output lines of its own (the executor's pre-run lines, `PRE-RUN`/`RUN`/`POST-RUN` START and END, `PLAY [...]`,
    # `TASK [...]`, `PLAY RECAP` and its host rows, a task's `ok`/`changed` status, the failed command's `ERROR` and
    # its JSON result); Bitrise's banner, `Version:`, `Running workflow:` / `Switching to workflow:`, its step boxes,
    # result and summary rows, the `git-clone` step's output, `+ <cmd>` echoes, `▼` and `Bitrise build failed`
    "zuul": re.compile(
        r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} \|(?:$| (?:Job console starting|Updating git repos|Cloning repos"
        r"|Restoring repo states|Merging changes|Checking out repos|Preparing playbooks|Running Ansible setup"
        r"|(?:PRE-|POST-)?RUN (?:START|END RESULT_\w+): |PLAY \[|TASK \[|PLAY RECAP$|[\w.-]+ \| (?:ok|changed|ERROR|\{|\})$"
        r"|[\w.-]+ \| ok: \d+ changed: \d+ |[\w.-]+ \|   \"(?:delta|end|msg|rc|start)\": ))"
    ),
    "bitrise": re.compile(
        r"^  [█╚]|^Version: \d|^INFO\[[\d:]+\] (?:Running|Switching to) workflow|^\+[-+]+\+$|^\|.*\|$|^ +▼$"
        r"|^Git Clone Configs:$|^- [A-Za-z]+: |^Fetching repository\.\.\.$|^Checking out commit\.\.\.$|^\$ git |^Checked out "
        r"|^\+ |^Bitrise build failed \(exit code: \d+\)$"
    ),
    # heldout20's README section (added after its one first run, on which no excerpt started on any of these): AppVeyor's
    # own lines (`Build started`, its clone and checkout, the build cache lines, `Command exited with code N`; the echoed
    # commands have no prefix and are not listed); builds.sr.ht's job-log lines (`[#<id>] <date> <time> ...`: booting,
    # settling, sending tasks, cloning, `Running task`, tearing down), the clone's output and the tasks' `+ <cmd>` echoes
    "appveyor": re.compile(
        r"^Build started$|^git clone -q --branch=\S+ https://|^git checkout -qf [0-9a-f]{40}$|^Restoring build cache$"
        r"|^Cache '[^']+' - Restored$|^Command exited with code \d+$"
    ),
    "sourcehut": re.compile(r"^\[#\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d |^Cloning into '[\w.-]+'\.\.\.$|^\+ "),
}


@pytest.mark.parametrize("wrapper", sorted(RUNNER_OWN_LINES))
def test_no_excerpt_starts_on_a_runners_own_line(signed, wrapper):
    logs = [rel for rel, v in LABELS.items() if v["wrapper"] == wrapper]
    assert logs
    started = {}
    for rel in logs:
        first = _text(rel).split("\n")[signed[rel].excerpt_lines[0] - 1]
        if RUNNER_OWN_LINES[wrapper].search(first):
            started[rel] = first
    # known misses, each said in the corpus README: sqlfluff's findings hold no failure word, so since method 31 made
    # Earthly's `exit code: N` closing line a trailer, the excerpt is Earthly's own `Command ... failed with exit code
    # 1` status (before, it was the closing line itself: a miss either way); go's `found packages a (a.go) and main
    # (main.go)` holds no failure word either, so the excerpt of heldout25's Drone log is Drone's own `drone_step_1 : exit
    # code 1` (its first run and since; a last-line rule measured for it took passing output elsewhere, README)
    known = {
        "earthly": {"lint/sqlfluff_lint_earthly.log"},
        "drone": {"go/found_packages_two_names_drone.log"},
    }.get(wrapper, set())
    assert set(started) == known, started
