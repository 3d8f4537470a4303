"""Fix kinds and the category level (issue 19): commands that differ only in their output
plumbing are one fix; stored kinds follow a change of method through the ``resign`` job; a
kind that fixed several distinct errors of a category is offered for a new one only when the
store is configured to (``Settings.fix_general_min``)."""

from __future__ import annotations

import pytest

from harness_memory import MemoryStore, Settings

AGENT = "ci"
TASK = {"id": "T-1", "title": "build", "agent_id": AGENT}
NO_PYTEST = "/usr/bin/python3: No module named pytest"
NETWORK = [
    "ConnectionResetError: [Errno 104] Connection reset by peer",
    "curl: (6) Could not resolve host: mirror.example.org",
    "socket.gaierror: [Errno -3] Temporary failure in name resolution",
]
NEW_NETWORK = (
    "fatal: unable to access 'https://git.example.org/repo.git/': Failed to connect to git.example.org "
    "port 443: Connection refused"
)
PERMISSION = "PermissionError: [Errno 13] Permission denied: '/var/log/app.log'"


def fixes(store, error):
    return [m.content for m in store.on_task_error(TASK, error).fixes]


def test_commands_differing_only_in_output_plumbing_add_up_as_one_fix(store):
    for text in (
        "cd /srv/app && tox -e py311 2>&1 | tail -20",
        "tox -e py311 > tox.log",
        "tox -e py311 | grep -v warn",
    ):
        store.learn_fix(NO_PYTEST, text, agent_id=AGENT)
    for _ in range(2):
        store.learn_fix(NO_PYTEST, "make test", agent_id=AGENT)
    got = store.on_task_error(TASK, NO_PYTEST)
    # three variants of one command (worked 3x) outrank a fix that worked twice
    assert got.fixes[0].content == "tox -e py311 | grep -v warn"  # the newest variant stands for its kind
    assert (got.fix_evidence[0].worked, got.fix_evidence[0].variants) == (3, 3)
    assert [m.content for m in got.fixes[1:]] == ["make test"]


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("python3 check.py", "python check.py", True),
        ("pip3 install -e .", "pip install -e .", True),
        ("python3.11 check.py", "python check.py", False),  # a versioned interpreter is a different fix
        ("make test 2>/dev/null", "make test", True),
        ("pytest -x >> logs/run.log", "pytest -x", True),
        ("pytest -x 2> errors.txt", "pytest -x", True),
        ('echo "numpy<2" > constraints.txt', 'echo "numpy<2"', False),  # writing a file a tool reads is the fix
        ("make test || tail -n 50 build.log", "make test", False),  # `||` runs on failure: not an output filter
        ("pytest -x | tee out/run.txt", "pytest -x", True),
        ("pytest -x | sh", "pytest -x", False),  # a pipe into a program that acts is part of the fix
        ('python -c "print(2 > 1)" 2>&1', 'python -c "print(2)"', False),  # quoted text is the fix's own
        ("yes | pip uninstall foo", "pip uninstall foo", False),
        ("cd build && cmake ..", "cmake ..", True),
        ("LANG=C.UTF-8 make docs", "make docs", False),  # an environment setting can be the fix
        ("cat > setup.cfg <<EOF\n[tool]\nEOF", "cat > setup.cfg", False),  # a script is compared whole
    ],
)
def test_what_makes_two_commands_one_fix(store, first, second, same):
    store.learn_fix(NO_PYTEST, first, agent_id=AGENT)
    store.learn_fix(NO_PYTEST, second, agent_id=AGENT)
    ev = store.fixes_for(NO_PYTEST, agent_id=AGENT)
    if same:
        assert [(e.worked, e.variants, e.memory.content) for e in ev] == [(2, 2, second)]
    else:
        assert sorted(e.memory.content for e in ev) == sorted([first, second])
        assert all(e.variants == 1 for e in ev)


def test_resign_rekinds_fixes_stored_under_an_older_method(store):
    old = store.learn_fix(NO_PYTEST, "cd /srv/app && tox -e py311 2>&1 | tail -5", agent_id=AGENT)
    b = store._core.backend
    with b.write() as c:  # as stored by a release whose kinds kept the output plumbing
        c.execute(f"UPDATE memories SET fix_kind = 'fix_00000000000000aa' WHERE id = {int(old.id)}")
        c.execute("UPDATE signature_state SET method = 4")
    store.learn_fix(NO_PYTEST, "tox -e py311", agent_id=AGENT)
    assert len(store.fixes_for(NO_PYTEST, agent_id=AGENT)) == 2  # stale kind: the evidence is split
    dry = store.run_job("resign", dry_run=True)
    assert dry.counts["fix_kinds"] == 1
    assert len(store.fixes_for(NO_PYTEST, agent_id=AGENT)) == 2  # a dry run changes nothing
    run = store.run_job("resign")
    assert run.status == "ok" and run.counts["fix_kinds"] == 1
    ev = store.fixes_for(NO_PYTEST, agent_id=AGENT)
    assert [(e.worked, e.variants) for e in ev] == [(2, 2)]
    assert store.run_job("resign").counts == {"signatures": 0, "changed": 0, "up_to_date": 1, "fix_kinds": 0}


def _general_store(db, clock, minimum):
    return MemoryStore(db, settings=Settings(fix_general_min=minimum), clock=clock)


def test_a_fix_that_fixed_several_errors_of_a_category_is_offered_for_a_new_one_when_configured(db, clock):
    with _general_store(db, clock, 3) as s:
        assert len({s.error_signature(e).id for e in [*NETWORK, NEW_NETWORK]}) == 4
        assert {s.error_signature(e).category for e in [*NETWORK, NEW_NETWORK]} == {"network"}
        for e in NETWORK:
            s.learn_fix(e, "retry the step with backoff", agent_id=AGENT)
        s.learn_fix(NETWORK[0], "restart the proxy", agent_id=AGENT)  # one error only: specific to it
        got = s.on_task_error(TASK, NEW_NETWORK)
        assert [m.content for m in got.fixes] == ["retry the step with backoff"]
        ev = got.fix_evidence[0]
        assert ev.level == "general" and ev.worked == 3
        assert ev.explain().startswith("same error category; worked 3x")
        assert fixes(s, PERMISSION) == []  # another category: nothing
        # the error's own link comes first
        s.learn_fix(NEW_NETWORK, "set GIT_PROXY", agent_id=AGENT)
        got = s.on_task_error(TASK, NEW_NETWORK)
        assert [(e.memory.content, e.level) for e in got.fix_evidence] == [
            ("set GIT_PROXY", "exact"),
            ("retry the step with backoff", "general"),
        ]


def test_category_level_needs_enough_distinct_errors_and_is_off_by_default(db, clock):
    with _general_store(db, clock, 3) as s:
        for e in NETWORK[:2]:
            s.learn_fix(e, "retry the step with backoff", agent_id=AGENT)
        for _ in range(3):  # the same error again is not another error
            s.learn_fix(NETWORK[0], "retry the step with backoff", agent_id=AGENT)
        assert fixes(s, NEW_NETWORK) == []
        s.learn_fix(NETWORK[2], "retry the step with backoff", agent_id=AGENT)
        assert fixes(s, NEW_NETWORK) == ["retry the step with backoff"]
    with MemoryStore(db, clock=clock) as s:  # default settings on the same data: abstain
        assert fixes(s, NEW_NETWORK) == []


def test_a_category_level_fix_that_did_not_help_stops_being_offered_for_that_error(db, clock):
    with _general_store(db, clock, 3) as s:
        for e in NETWORK:
            s.learn_fix(e, "retry the step with backoff", agent_id=AGENT)
        got = s.on_task_error(TASK, NEW_NETWORK)
        s.apply(got.fixes[0].id, helpful=False, agent_id=AGENT, task_id=TASK["id"])
        got = s.on_task_error(TASK, NEW_NETWORK)
        assert got.fixes == []
        assert [m.content for m in got.failures] == ["retry the step with backoff"]
        # still offered where it worked (in another task: this one was just told it did not help it)
        other = s.on_task_error({**TASK, "id": "T-2", "title": "deploy"}, NETWORK[1])
        assert [m.content for m in other.fixes] == ["retry the step with backoff"]


def test_category_level_fixes_stay_private_to_their_agent(db, clock):
    with _general_store(db, clock, 3) as s:
        for e in NETWORK:
            s.learn_fix(e, "retry the step with backoff", agent_id="someone-else")
        assert fixes(s, NEW_NETWORK) == []


def test_learn_error_kinds_and_binds_by_its_fix_not_by_the_error_it_carries(store):
    for module in ("yaml", "toml"):
        store.learn_error(AGENT, f"ModuleNotFoundError: No module named '{module}'", "pip install -r requirements.txt")
    store.learn_error(AGENT, "ModuleNotFoundError: No module named 'yaml'", "pip install pyyaml")
    got = store.on_task_error(TASK, "ModuleNotFoundError: No module named 'requests'")
    # the error's value is in the memory's text but not in its fix: the fix is not bound to it
    assert [(e.memory.content, e.worked, e.variants) for e in got.fix_evidence] == [
        ("ModuleNotFoundError: No module named 'toml': pip install -r requirements.txt", 2, 2)
    ]
    assert got.fixes[0].metadata["fix_starts_at"] == len("ModuleNotFoundError: No module named 'toml': ")
    # a fix naming the value stays bound to it
    yaml = [e.memory.content for e in store.fixes_for("ModuleNotFoundError: No module named 'yaml'", agent_id=AGENT)]
    assert "ModuleNotFoundError: No module named 'yaml': pip install pyyaml" in yaml


def test_resign_rekinds_learn_error_fixes_by_their_fix(store):
    m = store.learn_error(AGENT, "ModuleNotFoundError: No module named 'yaml'", "cd /srv && make deps 2>&1 | tail")
    b = store._core.backend
    with b.write() as c:
        c.execute(f"UPDATE memories SET fix_kind = 'fix_00000000000000bb' WHERE id = {int(m.id)}")
        c.execute("UPDATE signature_state SET method = 4")
    assert store.run_job("resign").counts["fix_kinds"] == 1
    store.learn_fix("ModuleNotFoundError: No module named 'toml'", "make deps", agent_id=AGENT)
    ev = store.fixes_for("ModuleNotFoundError: No module named 'json5'", agent_id=AGENT)
    assert [(e.worked, e.variants) for e in ev] == [(2, 2)]


def test_resign_never_gives_a_rewritten_fix_the_kind_of_its_old_text(db_path, clock, monkeypatch):
    import importlib

    from harness_memory.fixes import fix_kind
    from harness_memory.jobs import JOBS

    resign_job = importlib.import_module(JOBS["resign"].__module__)  # the module the job runs from

    with MemoryStore(db_path, clock=clock) as s, MemoryStore(db_path, clock=clock) as other:
        m = s.learn_fix(NO_PYTEST, "cd /srv && tox -e py311 2>&1 | tail -5", agent_id=AGENT, key="howto")
        with s._core.backend.write() as c:
            c.execute(f"UPDATE memories SET fix_kind = 'fix_00000000000000cc' WHERE id = {int(m.id)}")
            c.execute("UPDATE signature_state SET method = 4")
        calls = []

        def kind_while_another_process_rewrites(text):
            if not calls:  # between the job's read and its write, the keyed fix is rewritten
                other.learn_fix(NO_PYTEST, "make deps", agent_id=AGENT, key="howto")
            calls.append(text)
            return fix_kind(text)

        monkeypatch.setattr(resign_job, "fix_kind", kind_while_another_process_rewrites)
        run = s.run_job("resign")
        assert run.status == "ok" and run.counts["fix_kinds"] == 0
        assert calls == ["cd /srv && tox -e py311 2>&1 | tail -5"]
        row = s._core.backend.execute("SELECT content, fix_kind FROM memories WHERE id = ?", (m.id,)).fetchone()
        assert row == ("make deps", fix_kind("make deps"))


@pytest.mark.parametrize("bad", [123, ["pip install foo"], b"pip install foo"])
def test_a_fix_text_that_is_not_text_is_refused_and_writes_nothing(store, bad):
    from conftest import table_snapshot
    from harness_memory import InvalidInputError

    before = table_snapshot(store)
    with pytest.raises(InvalidInputError):
        store.learn_fix(NO_PYTEST, "pip install foo", agent_id=AGENT, fix_text=bad)
    assert table_snapshot(store) == before
