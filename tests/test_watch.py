"""The live MEMORY.md (issue 14): a real watcher thread on real files — edits, additions, deletions,
a rename into place, a deleted file, rapid successive saves, a syntax error, hash skipping and
write-back without a loop — with watchfiles and with the polling fallback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from harness_memory import EmbedderMismatchError, HarnessMemoryError, InvalidInputError, MemoryStore
from harness_memory.testing import FakeEmbedder
from harness_memory.watch import MarkdownWatcher

DEBOUNCE = 0.3


def wait_for(cond, timeout=15.0, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(step)
    raise AssertionError("condition not met within the timeout")


def contents(store, agent="alice"):
    rows = store._core.backend.execute("SELECT content FROM memories WHERE agent_id = ? ORDER BY id", (agent,))
    return [r[0] for r in rows]


def kinds(w, kind):
    return [e for e in w.snapshot() if e.kind == kind]


@pytest.fixture(params=["watchfiles", "poll"])
def setup(request, tmp_path):
    folder = tmp_path / "agents"
    (folder / "alice").mkdir(parents=True)
    store = MemoryStore(tmp_path / "w.db")
    store.remember("use the mirror when the index is down", type="success", agent_id="alice")
    store.export_markdown("alice", folder / "alice" / "MEMORY.md")
    w = store.watch(folder, debounce=DEBOUNCE, poll=request.param == "poll")
    yield store, w, folder / "alice" / "MEMORY.md"
    store.close()
    assert not w.running


@pytest.fixture
def synced(tmp_path):
    """A store with one memory of alice's, exported to agents/alice/MEMORY.md: (store, folder, file)."""
    folder = tmp_path / "agents"
    (folder / "alice").mkdir(parents=True)
    with MemoryStore(tmp_path / "w.db") as store:
        store.remember("first memory", type="success", agent_id="alice")
        md = folder / "alice" / "MEMORY.md"
        store.export_markdown("alice", md)
        yield store, folder, md


def test_edit_add_delete_are_applied(setup):
    store, w, md = setup
    text = md.read_text()
    md.write_text(
        text.replace("use the mirror", "use the internal mirror")
        + "- [2026-11-20] (failure): pip times out behind the proxy\n"
    )
    wait_for(lambda: "pip times out behind the proxy" in contents(store))
    assert contents(store) == ["use the internal mirror when the index is down", "pip times out behind the proxy"]
    ev = wait_for(lambda: kinds(w, "imported"))[-1]
    assert (ev.agent_id, ev.detail["inserted"], ev.detail["updated"]) == ("alice", 1, 1)
    lines = [ln for ln in md.read_text().splitlines() if "mirror" not in ln]
    md.write_text("\n".join(lines) + "\n")  # the mirror bullet deleted
    wait_for(lambda: contents(store) == ["pip times out behind the proxy"])


def test_rapid_saves_are_debounced_and_a_touch_is_skipped(setup):
    store, w, md = setup
    base = md.read_text()
    before = len(kinds(w, "imported"))
    for k in range(12):  # an editor autosaving every 20 ms
        md.write_text(base + "".join(f"- [2026-11-20] (decision): step {j}\n" for j in range(k + 1)))
        time.sleep(0.02)
    wait_for(lambda: len(contents(store)) == 13)
    time.sleep(DEBOUNCE * 3)
    assert len(kinds(w, "imported")) - before == 1  # one import of the final text
    assert contents(store)[-1] == "step 11"
    os.utime(md)  # saved again without a change
    md.write_text(md.read_text())
    wait_for(lambda: kinds(w, "skipped"))
    assert len(contents(store)) == 13


def test_rename_into_place_and_delete(setup):
    store, w, md = setup
    tmp = md.with_name("MEMORY.md.tmp")  # how editors save: write aside, rename over
    tmp.write_text(md.read_text() + "- [2026-11-21] (pattern): flaky tests share a fixture\n")
    os.replace(tmp, md)
    wait_for(lambda: "flaky tests share a fixture" in contents(store))
    md.unlink()
    wait_for(lambda: kinds(w, "removed"))
    assert len(contents(store)) == 2  # a deleted file deletes nothing


def test_a_syntax_error_is_reported_with_its_line_and_changes_nothing(setup, caplog):
    store, w, md = setup
    md.write_text(md.read_text() + "- [2026-13-45] (failure): a bad date\n- not a bullet at all\n")
    err = wait_for(lambda: kinds(w, "error"))[-1]
    assert "ImportFormatError" in err.detail["error"] and "MEMORY.md:" in err.detail["error"]
    line = int(err.detail["error"].split("MEMORY.md:")[1].split(":")[0])
    assert md.read_text().splitlines()[line - 1].startswith("- [2026-13-45]")
    # and logged (what `harness-memory watch` prints), naming the file and the line
    warned = [r.getMessage() for r in caplog.records if r.name == "harness_memory.watch" and r.levelname == "WARNING"]
    assert any(f"{md} not imported" in m and f"MEMORY.md:{line}:" in m for m in warned)
    assert contents(store) == ["use the mirror when the index is down"]
    assert w.running  # and it keeps watching
    fixed = "\n".join(ln for ln in md.read_text().splitlines() if "2026-13-45" not in ln and "not a bullet" not in ln)
    md.write_text(fixed + "\n- [2026-11-22] (success): fixed the file\n")
    wait_for(lambda: "fixed the file" in contents(store))


def test_a_new_agent_folder_is_picked_up(setup):
    store, _w, md = setup
    bob = md.parent.parent / "bob"
    bob.mkdir()
    (bob / "MEMORY.md").write_text("# bob\n\n- [2026-11-22] (preference): bob likes small commits\n")
    wait_for(lambda: contents(store, "bob") == ["bob likes small commits"])


def test_write_back_without_a_loop(synced):
    store, folder, md = synced
    w = store.watch(folder, debounce=DEBOUNCE, write_back=True)
    m = store.remember("written through the API", type="decision", agent_id="alice")
    wait_for(lambda: "written through the API" in md.read_text())
    time.sleep(DEBOUNCE * 4)
    exported, imported = len(kinds(w, "exported")), len(kinds(w, "imported"))
    assert exported == 1 and imported == 0  # the export's own change was skipped by hash
    assert m.uid in md.read_text()
    store.forget(m.id)
    wait_for(lambda: "written through the API" not in md.read_text())
    # a human edit wins over a pending write-back: imported, not overwritten
    md.write_text(md.read_text() + "- [2026-11-22] (success): typed by a human\n")
    wait_for(lambda: "typed by a human" in contents(store))
    time.sleep(DEBOUNCE * 4)
    assert "typed by a human" in md.read_text()
    n_exports = len(kinds(w, "exported"))
    time.sleep(DEBOUNCE * 4)
    assert len(kinds(w, "exported")) == n_exports  # quiet: no loop


def test_bad_arguments(tmp_path):
    with MemoryStore(tmp_path / "w.db") as store:
        with pytest.raises(InvalidInputError):
            store.watch(tmp_path / "missing")
        (tmp_path / "f").write_text("x")
        with pytest.raises(InvalidInputError):
            store.watch(tmp_path / "f")
        with pytest.raises(InvalidInputError):
            store.watch(tmp_path, debounce=-1)
        with pytest.raises(InvalidInputError):
            store.watch(tmp_path, on_event="print")
        assert store._watchers == []


def test_cli_watch_runs_until_sigterm(tmp_path):
    folder = tmp_path / "agents"
    (folder / "carol").mkdir(parents=True)
    db = tmp_path / "cli.db"
    env = {**os.environ, "HARNESS_MEMORY_DB": str(db)}
    p = subprocess.Popen(
        [sys.executable, "-m", "harness_memory", "watch", "--dir", str(folder), "--debounce", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        wait_for(lambda: db.exists(), timeout=30)
        time.sleep(1.0)
        (folder / "carol" / "MEMORY.md").write_text("- [2026-11-22] (success): carol's note\n")

        def seen():
            with MemoryStore(db) as s:
                return contents(s, "carol") == ["carol's note"]

        wait_for(seen, timeout=30, step=0.3)
    finally:
        p.send_signal(signal.SIGTERM)
        _out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert "watching" in err and "imported" in err


def test_start_raises_what_stopped_the_watcher_from_opening_the_database(tmp_path):
    # the watcher opens its own store: one that cannot (here: the caller allowed an embedder change the
    # watcher was not told about) is refused by start() with that error, not left as a dead thread
    folder = tmp_path / "agents"
    (folder / "alice").mkdir(parents=True)
    with MemoryStore(tmp_path / "w.db") as store:
        store.remember("first memory", type="success", agent_id="alice")
    with MemoryStore(tmp_path / "w.db", embedder=FakeEmbedder(48), allow_embedder_change=True) as store:
        with pytest.raises(EmbedderMismatchError):
            store.watch(folder, poll=True)
        assert store._watchers == []


_HOLD_LOCK = """
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
c.execute("COMMIT")
"""


def test_start_gives_up_after_its_timeout_and_the_watcher_catches_up_once_the_lock_is_free(tmp_path):
    folder = tmp_path / "agents"
    (folder / "alice").mkdir(parents=True)
    (folder / "alice" / "MEMORY.md").write_text("- [2026-11-20] (failure): pip times out behind the proxy\n")
    with MemoryStore(tmp_path / "w.db") as store:
        holder = subprocess.Popen(  # another process holds the write lock the first import needs
            [sys.executable, "-c", _HOLD_LOCK, str(tmp_path / "w.db")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
            w = MarkdownWatcher(store, folder, debounce=DEBOUNCE, poll=True)
            with pytest.raises(HarnessMemoryError, match="did not start within 0.3 s"):
                w.start(timeout=0.3)
        finally:
            holder.communicate("\n", timeout=30)
        try:
            wait_for(lambda: contents(store) == ["pip times out behind the proxy"])
        finally:
            w.stop()


def test_other_files_in_the_watched_folder_are_not_agents(setup):
    store, w, md = setup
    folder = md.parent.parent
    (folder / "notes.txt").write_text("not an agent's folder\n")
    (folder / "scratch").mkdir()  # a folder without a MEMORY.md
    (folder / "scratch" / "todo.md").write_text("- [2026-11-22] (decision): not a memory file\n")
    (folder / "bob").mkdir()
    (folder / "bob" / "MEMORY.md").write_text("- [2026-11-22] (preference): bob likes small commits\n")
    wait_for(lambda: contents(store, "bob") == ["bob likes small commits"])
    time.sleep(DEBOUNCE * 3)
    assert {e.agent_id for e in w.snapshot()} <= {"alice", "bob"}
    assert not kinds(w, "error") and not kinds(w, "removed")
    assert contents(store, "scratch") == [] and contents(store, "notes.txt") == []


def test_without_write_back_api_changes_never_touch_the_file(synced):
    store, folder, md = synced
    before = md.read_text()
    w = store.watch(folder, debounce=DEBOUNCE, write_back=False, poll=True)
    store.remember("written through the API", type="decision", agent_id="alice")
    # the watcher is alive and looking: a human edit of another agent's file is imported meanwhile
    (folder / "bob").mkdir()
    (folder / "bob" / "MEMORY.md").write_text("- [2026-11-22] (preference): bob likes small commits\n")
    wait_for(lambda: contents(store, "bob") == ["bob likes small commits"])
    time.sleep(DEBOUNCE * 4)
    assert md.read_text() == before and not kinds(w, "exported")


def test_write_back_never_overwrites_a_human_edit_it_could_not_import(synced):
    store, folder, md = synced
    w = store.watch(folder, debounce=DEBOUNCE, write_back=True, poll=True)
    broken = md.read_text() + "- not a bullet at all\n"  # a human's edit, half done
    md.write_text(broken)
    wait_for(lambda: kinds(w, "error"))
    store.remember("written through the API", type="decision", agent_id="alice")
    time.sleep(DEBOUNCE * 4)
    assert md.read_text() == broken and not kinds(w, "exported")  # the human's text is kept
    # once the human's file reads, it is imported, and then the API's memory is written back to it
    md.write_text(broken.replace("- not a bullet at all\n", "- [2026-11-22] (success): fixed by the human\n"))
    wait_for(lambda: "written through the API" in md.read_text())
    assert "fixed by the human" in md.read_text()
    assert sorted(contents(store)) == ["first memory", "fixed by the human", "written through the API"]


def test_a_write_back_that_cannot_write_the_file_is_reported(synced):
    store, folder, md = synced
    (folder / "alice" / "MEMORY.md.tmp").mkdir()  # where the export writes before it renames: in the way
    w = store.watch(folder, debounce=DEBOUNCE, write_back=True, poll=True)
    store.remember("written through the API", type="decision", agent_id="alice")
    err = wait_for(lambda: kinds(w, "error"))[-1]
    assert (err.agent_id, err.detail) == ("alice", {"error": "write-back: FileAccessError"})
    assert "written through the API" not in md.read_text() and w.running
