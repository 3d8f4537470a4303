"""The fix-recall benchmark's own machinery: pair extraction, shapes, metrics, baselines.

Small hand-made inputs with known answers; the library's ranking is not judged here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import fix_recall as fr  # noqa: E402
from fix_streams import extract_failures, instance_number, parse, shape, targets, truncate_output  # noqa: E402

SESSIONS = Path(__file__).resolve().parent / "fixtures" / "fix_streams" / "sessions.jsonl"


def step(command: str, rc: int, output: str = "") -> dict:
    return {"command": command, "returncode": rc, "output": f"<output>\n{output}</output>"}


def run(steps: list[dict], iid: str = "demo__demo-1") -> dict:
    return {"instance_id": iid, "repo": "demo", "resolved": True, "steps": steps}


# -- shapes and targets ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command, expected",
    [
        (
            "cd /testbed && PYTHONPATH=. timeout 60 ./tests/runtests.py delete 2>&1 | tail -5",
            "tests/runtests.py <target>",
        ),
        ("pytest tests/test_x.py -x", "pytest <target> -x"),
        ("python3 -m pytest tests/test_x.py::TestA::test_b", "python -m pytest <target>"),
        ("/usr/bin/python3 reproduce.py > out.txt", "python <target>"),
        ("python3.11 tool.py", "python3.11 <target>"),
        ("pip install pyyaml && python app.py", "pip install pyyaml && python <target>"),
        ("ruff check --fix src/a.py src/b.py", "ruff check --fix <target>"),
        ("cd webapp && npm run check", "npm run check"),
        ("python manage.py migrate --fake-initial", "python manage.py <target> --fake-initial"),
        ('python -c "import yaml" && python app.py', "python -c <code> && python <target>"),
    ],
)
def test_shape(command, expected):
    assert shape(command) == expected


def test_the_same_test_target_across_runners_and_spellings():
    assert targets("pytest tests/test_x.py") == targets("python -m unittest tests.test_x") == {"tests.test_x"}
    assert targets("./tests/test_x.py") == {"tests.test_x"}
    assert targets("pytest tests/a.py::test_b") == {"tests.a.test_b"}
    assert targets("./tests/runtests.py --verbosity 2 --settings=test_sqlite queries") == {"queries"}
    assert targets("pytest -k test_foo tests/a.py") == {"tests.a"}  # -k's expression is a selector, not a target
    assert targets("cd proj && make") == targets("cd proj && make build") == {"proj"}
    assert targets("python manage.py test shop") == {"shop"}
    assert targets("python -c 'print(1)'") == frozenset()


@pytest.mark.parametrize(
    "command",
    [
        "cat tests/test_x.py",
        "grep -rn foo django/",
        "sed -i 's/a/b/' x.py",
        "ls -la",
        "find . -name '*.py'",
        "echo hi > notes.txt",
        "cat <<'EOF' > reproduce.py\nimport sys\nprint(sys.argv)\nEOF",
        "git diff",
        "pip install pyyaml",
        "cd /testbed && git status",
    ],
)
def test_edits_inspections_and_setup_are_not_runs(command):
    assert parse(command).kind == "edit"


def test_a_heredoc_write_followed_by_a_run_is_a_run_of_the_written_script():
    p = parse("cat <<'EOF' > repro.py\nimport pytest && bad\nEOF\npython repro.py")
    assert p.kind == "run" and p.targets == {"repro"} and p.shape == "python <target>"


# -- pairs ----------------------------------------------------------------------------------------


def test_pair_found_with_another_runner_edits_ignored():
    fs = extract_failures(
        run(
            [
                step("pytest tests/test_x.py", 1, "/usr/bin/python3: No module named pytest"),
                step("cat tests/test_x.py", 0),
                step("grep -n nothing tests/test_x.py", 1),  # an inspection that fails is not a failure
                step("python -m unittest tests.test_other", 0),  # another target: not the repair
                step("python -m unittest tests.test_x", 0),
                step("python -m unittest tests.test_x -v", 0),  # the repair is the FIRST later success
            ]
        )
    )
    assert len(fs) == 1
    f = fs[0]
    assert (f.step, f.repair_step) == (0, 4)
    assert f.failed_shape == "pytest <target>" and f.repair_shape == "python -m unittest <target>"
    assert "No module named pytest" in f.output


def test_no_pair_without_a_later_success_of_the_same_target():
    fs = extract_failures(
        run(
            [
                step("python app.py", 0),  # a success BEFORE the failure does not repair it
                step("python app.py", 1, "ModuleNotFoundError: No module named 'yaml'"),
                step("python other.py", 0),
                step("python app.py", 1, "ModuleNotFoundError: No module named 'yaml'"),
                step("python -c 'import yaml'", 1, "ModuleNotFoundError"),  # no target: asked, never paired
            ]
        )
    )
    assert [f.step for f in fs] == [1, 3, 4]
    assert all(f.repair is None for f in fs)


def test_several_failures_share_one_repair():
    fs = extract_failures(
        run(
            [
                step("pytest tests/test_m.py", 4, "ERROR: file not found"),
                step("python -m pytest tests/test_m.py -q", 1, "1 failed"),
                step("./runtests.py tests/test_m.py", 0, "1 passed"),
            ]
        )
    )
    assert [(f.step, f.repair_step) for f in fs] == [(0, 2), (1, 2)]
    assert {f.repair_shape for f in fs} == {"runtests.py <target>"}


def test_instance_order_and_truncation():
    ids = ["django__django-9871", "django__django-11099", "django__django-10097"]
    assert sorted(ids, key=instance_number) == ["django__django-9871", "django__django-10097", "django__django-11099"]
    assert truncate_output("ok\n") == "<output>\nok\n</output>"
    long = "h" * 6000 + "m" * 3000 + "t" * 6000
    cut = truncate_output(long)
    assert "<output_head>\n" + "h" * 5000 + "\n</output_head>" in cut and "5000 characters elided" in cut
    assert cut.endswith("t" * 5000 + "\n</output_tail>")


# -- metrics --------------------------------------------------------------------------------------


def test_hit_at_k():
    assert fr._score(["a", "b", "c"], "a") == fr.Outcome(True, True, True)
    assert fr._score(["a", "b", "c"], "c") == fr.Outcome(True, False, True)
    assert fr._score(["a", "b", "c", "d"], "d") == fr.Outcome(True, False, False)
    assert fr._score([], "a") == fr.Outcome(False, False, False)
    assert fr._score(["a"], None) == fr.Outcome(True, False, False)


def _asked(repair_shape, seen, lib, group="g"):
    c = fr.Case("id", "t", "err", "k", None if repair_shape is None else "cmd", repair_shape)
    out = {m: fr._score(lib if m == "on_task_error" else [], repair_shape) for m in fr.METHODS}
    return fr.Asked(c, group, seen, out)


def test_rows_hit_rates_answer_rate_and_false_advice():
    asked = [
        _asked("A", True, ["A"]),  # seen, hit@1
        _asked("A", True, ["B", "A"]),  # seen, hit@3 only
        _asked("B", True, []),  # seen, nothing answered
        _asked("C", False, ["A"]),  # unseen, advised anyway: false advice
        _asked("D", False, []),  # unseen, quiet
        _asked(None, False, []),  # no repair, quiet
        _asked(None, False, ["A", "B"]),  # no repair, advised: false advice
        _asked(None, False, []),
    ]
    rows = {r[1]: r for r in fr.rows_for("pooled", asked)}
    lib = rows["on_task_error"]
    assert lib[2:4] == [5, 3]  # pairs, seen
    assert lib[4] == pytest.approx(1 / 3)  # hit@1 seen
    assert lib[5] == pytest.approx(2 / 3)  # hit@3 seen
    assert lib[6] == pytest.approx(1 / 5)  # hit@1 all pairs
    assert lib[7] == pytest.approx(2 / 5)  # hit@3 all pairs
    assert lib[8] == pytest.approx(4 / 8)  # answered, over every asked failure
    assert lib[9] == pytest.approx(1 / 2)  # false advice, unseen repairs
    assert lib[10] == pytest.approx(1 / 3)  # false advice, no repair
    assert rows["best possible"][6] == pytest.approx(3 / 5)


def test_bm25_returns_the_nearest_failures_repairs_once_each():
    bm = fr.BM25()
    bm.add("ModuleNotFoundError: No module named 'yaml'", "pip install pyyaml && python <target>")
    bm.add("ModuleNotFoundError: No module named 'yaml' in load.py", "pip install pyyaml && python <target>")
    bm.add("fixture 'tmp_dir' not found", "python -m pytest -p plugins <target>")
    bm.add("ruff: F401 imported but unused", "ruff check --fix <target>")
    assert bm.answer("No module named 'yaml'")[0] == "pip install pyyaml && python <target>"
    assert bm.answer("E fixture 'tmp_dir' not found")[0] == "python -m pytest -p plugins <target>"
    assert len(bm.answer("No module named 'yaml' fixture", k=3)) == 2  # the yaml repair listed once
    assert bm.answer("completely unrelated words") == []


def test_most_frequent_repair_of_the_failed_command_shape():
    mf = fr.MostFrequent()
    for rep in ["bin/test <target>", "python -m pytest <target>", "bin/test <target>"]:
        mf.add("pytest <target>", rep)
    mf.add("python <target>", "python3.11 <target>")
    assert mf.answer("pytest <target>") == ["bin/test <target>", "python -m pytest <target>"]
    assert mf.answer("make") == []


def test_fix_text_of_each_teach_mode_maps_to_the_taught_repair():
    known = {"./tests/runtests.py queries": "tests/runtests.py <target>"}
    assert fr.command_answer_shape("./tests/runtests.py queries", known) == "tests/runtests.py <target>"
    # on_task_complete stores "<title>: <summary>", learn_error "<error>: <fix>"
    assert (
        fr.command_answer_shape("django__django-1: ./tests/runtests.py queries", known) == "tests/runtests.py <target>"
    )
    assert fr.command_answer_shape("Error: x: y\n: ./tests/runtests.py queries", known) == "tests/runtests.py <target>"
    assert fr.command_answer_shape("pytest tests/a.py", known) == "pytest <target>"
    assert fr.d4j_answer_shape("patch Lang-7: org.apache.commons.lang3.FooTest", {}) == "patch Lang-7"
    assert fr.d4j_answer_shape("trace text: patch Lang-7: x", {}) == "patch Lang-7"


def test_replay_bookkeeping_on_a_tiny_stream(tmp_path):
    """Teach the first 60% of runs, ask the rest; seen/unseen and the BM25 baseline are exact here."""
    err_yaml = "Traceback:\nModuleNotFoundError: No module named 'yaml'"
    runs = []
    for n, app in enumerate(["a", "b", "c", "d", "e"], start=1):
        runs.append(
            run(
                [step(f"python {app}.py", 1, err_yaml), step(f"pip install pyyaml && python {app}.py", 0)],
                f"demo__demo-{n}",
            )
        )
    runs.append(
        run(
            [step("gcc src/m.c -o bin/m", 1, "undefined reference to `sqrt'"), step("gcc src/m.c -o bin/m -lm", 0)],
            "demo__demo-6",
        )
    )
    runs.append(run([step("python -m unittest tests.test_q", 1, "AssertionError: 1 != 2")], "demo__demo-7"))
    src = fr.runs_source("demo", runs)
    assert [t.teach for t in sorted(src.tasks, key=lambda t: t.order)] == [True] * 4 + [False] * 3
    asked, stats = fr.replay(src, "learn_success", credit=True, online=False, db_dir=tmp_path)
    assert stats["taught"] == 4 and stats["teach_errors"] == 0
    assert [(a.case.case_id, a.seen) for a in asked] == [
        ("demo__demo-5#0", True),
        ("demo__demo-6#0", False),
        ("demo__demo-7#0", False),
    ]
    assert asked[0].out["BM25 nearest failure"].hit1
    assert asked[0].out["most frequent repair"].hit1
    assert (
        asked[1].case.repair_shape == "gcc <target> -o <target> -lm" and not asked[1].out["BM25 nearest failure"].hit3
    )
    assert asked[2].case.repair is None


def test_the_issue_s_protocol_gives_the_run_as_the_task_and_teaches_none(tmp_path, monkeypatch):
    """--task run: the run's id is the title and learn_success gets no task, so what the library
    answers with comes from the error text alone (here: the origin of its traceback)."""

    def tb(exc: str) -> str:
        return f'Traceback (most recent call last):\n  File "/testbed/repro.py", line 4, in <module>\n{exc}'

    excs = ["KeyError: 'a'", "ValueError: bad value", "TypeError: not a str", "IndexError: out of range"]
    runs = [
        run([step("python repro.py", 1, tb(e)), step("sed -i s/a/b/ x.py", 0), step("python repro.py", 0)], f"d__d-{n}")
        for n, e in enumerate(excs + ["OSError: gone"], start=1)
    ]
    monkeypatch.setattr(fr, "TASK", "run")
    monkeypatch.setattr(fr, "SETTINGS", {"fix_origin_min": 2})
    src = fr.runs_source("demo", runs)
    assert [fr.title_of(c) for t in src.tasks for c in t.cases] == [f"d__d-{n}" for n in range(1, 6)]
    asked, stats = fr.replay(src, "learn_success", credit=True, online=False, db_dir=tmp_path)
    assert stats["taught"] == 3 and [a.case.case_id for a in asked] == ["d__d-4#0", "d__d-5#0"]
    assert all(a.out["on_task_error"].hit1 for a in asked)
    # the origin tier off, and the similar one (the re-run fixed three errors: it carries over to a fourth)
    monkeypatch.setattr(fr, "SETTINGS", {"fix_origin_min": None, "fix_similar_min": None})
    asked, _ = fr.replay(src, "learn_success", credit=True, online=False, db_dir=tmp_path / "off")
    assert not any(a.out["on_task_error"].answered for a in asked)


def test_learn_fix_mode_without_the_api_exits_2(monkeypatch, capsys):
    monkeypatch.delattr(fr.MemoryStore, "learn_fix", raising=False)
    assert fr.main(["--teach", "learn_fix", "--sources", "scripted"]) == 2
    assert "unavailable" in capsys.readouterr().err


# -- the recorded corpus --------------------------------------------------------------------------


def test_recorded_sessions_pair_as_their_scenario_says():
    assert SESSIONS.stat().st_size < 1_000_000
    recs = [json.loads(line) for line in SESSIONS.read_text(encoding="utf-8").splitlines()]
    kinds = {"norepair": 0, "paired": 0}
    for r in recs:
        assert set(r) >= {"instance_id", "repo", "resolved", "steps"}
        assert all(set(s) == {"command", "returncode", "output"} for s in r["steps"])
        fs = extract_failures(r)
        assert fs, r["instance_id"]
        if r["scenario"].startswith("norepair"):
            assert all(f.repair is None for f in fs), r["instance_id"]
            kinds["norepair"] += 1
        else:
            assert all(f.repair is not None and f.repair_shape != f.failed_shape for f in fs), r["instance_id"]
            kinds["paired"] += 1
    assert kinds["norepair"] >= 5 and kinds["paired"] >= 50


# -- the held-out corpus (recorded by make_heldout_sessions.py, measured once) --------------------

HELDOUT = SESSIONS.with_name("sessions-heldout.jsonl")
# the repair shape each scenario was written to have: one per recurring scenario (a fix that recurs
# with other files, modules, projects and databases), one per late scenario but cargo's, whose
# binary name is part of the fix
HELDOUT_REPAIRS = {
    "mypy_stubs": "mypy --install-types --non-interactive <target>",
    "pytest_cov": "pip install pytest-cov && python -m pytest <target> --cov",
    "django_migrate": "python manage.py migrate && python <target>",
    "node_esm": "npm pkg set type=module && node <target>",
    "npm_install": "npm install && npm test",
    "make_cflags": "make CFLAGS=-std=c99",
    "no_shebang": "python <target>",
    "sqlite_schema": "sqlite3 <target> && sqlite3 <target>",
    "pytest_xdist_flag": "python -m pytest <target>",
    "cxx_std": "g++ -std=c++20 <target> -o <target>",
    "pytest_import_mode": "python -m pytest --import-mode=importlib <target>",
}


def test_heldout_sessions_pair_as_their_scenarios_say():
    assert HELDOUT.stat().st_size < 1_000_000
    recs = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines()]
    assert [r["instance_id"] for r in recs] == [f"scripted-heldout__sessions-{n}" for n in range(1, len(recs) + 1)]
    assert {r["repo"] for r in recs} == {"scripted/heldout"}
    dev = {json.loads(line)["scenario"] for line in SESSIONS.read_text(encoding="utf-8").splitlines()}
    assert not dev & {r["scenario"] for r in recs}  # no dev scenario comes back
    pairs: dict[str, int] = {}
    sessions: dict[str, int] = {}
    for r in recs:
        assert all(set(s) == {"command", "returncode", "output"} for s in r["steps"])
        fs = extract_failures(r)
        assert fs, r["instance_id"]
        sc = r["scenario"]
        sessions[sc] = sessions.get(sc, 0) + 1
        if sc.startswith("norepair"):
            assert all(f.repair is None for f in fs) and not r["resolved"], r["instance_id"]
            continue
        assert r["resolved"], r["instance_id"]
        for f in fs:
            assert f.repair is not None and f.repair_shape != f.failed_shape, f.run_id
            if sc == "cargo_bin":
                assert f.repair_shape.startswith("cargo run --bin ") and f.failed_shape == "cargo run"
            else:
                assert f.repair_shape == HELDOUT_REPAIRS[sc], f.run_id
            pairs[sc] = pairs.get(sc, 0) + 1
    recurring = {k for k in HELDOUT_REPAIRS if k not in ("cxx_std", "pytest_import_mode")}
    assert all(5 <= sessions[k] <= 7 for k in recurring)
    assert sessions["cxx_std"] == sessions["cargo_bin"] == sessions["pytest_import_mode"] == 3
    assert sum(v for k, v in sessions.items() if k.startswith("norepair")) == 6
    assert sum(pairs.values()) == 67 and len(recs) == 64
    # a second failing attempt before the repair is paired with the same repair
    assert pairs["mypy_stubs"] == 9 and pairs["django_migrate"] == 7 and pairs["node_esm"] == 8


def test_heldout_split_teaches_every_recurring_scenario_and_never_a_late_one():
    src = fr.runs_source("scripted", [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines()])
    scen = {r["instance_id"]: r["scenario"] for r in map(json.loads, HELDOUT.read_text(encoding="utf-8").splitlines())}
    taught: dict[str, set[bool]] = {}
    for t in src.tasks:
        for c in t.cases:
            taught.setdefault(scen[c.case_id.split("#")[0]], set()).add(t.teach)
    late = {"cxx_std", "cargo_bin", "pytest_import_mode"}
    assert all(taught[k] == {False} for k in late)
    assert all(v == {True, False} for k, v in taught.items() if k not in late and not k.startswith("norepair"))
    assert taught["norepair_mypy"] == {True, False} and taught["norepair_node"] == {True, False}
