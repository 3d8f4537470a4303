"""Similar errors found by their failure blocks, not only their decisive lines (issue 19, migration 0027).

A script that fails again after an edit fails in other words (``ValueError: channel closed``, then ``KeyError:
'standby'``) at the same frames. The decisive lines share nothing; the failure blocks (the line with its frames,
``fixes.instance_text``) share most of their words. The fix ranking searches both (``fix_errors_fts`` and
``fix_blocks_fts`` on SQLite, ``excerpt_tsv`` and ``instance_tsv`` on PostgreSQL) and offers the fix of a linked error
whose line or block is ``Settings.fix_similar_min`` similar, where the fix carried over between errors
(``Settings.fix_similar_breadth``). Contract tests: every backend.
"""

from __future__ import annotations

from harness_memory import MemoryStore
from harness_memory.fixes import instance_text, link_text, words

AGENT = "coder"
TASK = {"id": "T-47", "title": "make the replica sync", "agent_id": AGENT}
RERUN = "python reproduce_sync.py"


def failure(last: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/reproduce_sync.py", line 12, in <module>\n'
        "    replicate(primary_shard, standby_node)\n"
        '  File "/srv/app/replication/stream.py", line 88, in replicate\n'
        "    reader.open_channel(primary_shard)\n" + last
    )


TAUGHT = [failure("ValueError: channel closed by the primary"), failure("TimeoutError: standby did not answer in time")]
ASKED = failure("KeyError: 'standby'")


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b)


def test_a_script_failing_in_other_words_at_the_same_frames_gets_the_fix_that_carried_over(db, clock):
    with MemoryStore(db, clock=clock) as s:
        for e in TAUGHT:
            s.learn_success(AGENT, RERUN, error=e)
        asked, taught = s.error_signature(ASKED), [s.error_signature(e) for e in TAUGHT]
        assert asked.id not in {t.id for t in taught}
        # the lines are not alike (the line search alone would not find them); the blocks are
        limit = s.settings.fix_similar_min
        assert all(_jaccard(words(link_text(asked)), words(link_text(t))) < limit for t in taught)
        assert all(_jaccard(words(instance_text(asked)), words(instance_text(t))) >= limit for t in taught)
        got = s.on_task_error(TASK, ASKED)
        assert [m.content for m in got.fixes] == [RERUN]
        ev = got.fix_evidence[0]
        assert ev.level == "similar" and ev.worked == 2
        assert (
            abs(ev.similarity - max(_jaccard(words(instance_text(asked)), words(instance_text(t))) for t in taught))
            < 1e-9
        )


def test_an_unrelated_failure_elsewhere_gets_no_fix(db, clock):
    with MemoryStore(db, clock=clock) as s:
        for e in TAUGHT:
            s.learn_success(AGENT, RERUN, error=e)
        other = (
            "Traceback (most recent call last):\n"
            '  File "/home/ci/build/tools/render_docs.py", line 3, in <module>\n'
            "    import markdown_it\n"
            "ModuleNotFoundError: No module named 'markdown_it'"
        )
        assert s.on_task_error(TASK, other).fixes == []


def test_the_block_search_follows_every_change_of_the_links(db, clock):
    with MemoryStore(db, clock=clock) as s:
        mems = [s.learn_success(AGENT, RERUN, error=e) for e in TAUGHT]
        b = s._core.backend
        terms = sorted(words(instance_text(s.error_signature(ASKED))))
        assert len(b.similar_blocks(terms, 10)) == 2
        s.forget(mems[0].id)  # the two errors' links are one memory's (a re-run taught twice is one memory)
        assert b.similar_blocks(terms, 10) == []
        assert s.on_task_error(TASK, ASKED).fixes == []


def test_links_taught_before_the_step_are_searchable_after_it(db, clock):
    with MemoryStore(db, clock=clock) as s:
        for e in TAUGHT:
            s.learn_success(AGENT, RERUN, error=e)
        b = s._core.backend
        with b.write() as c:  # the database as it was before the step: its links written, no block search
            if b.dialect == "sqlite":
                for trigger in ("fix_links_block_ai", "fix_links_block_au", "fix_links_block_ad"):
                    c.execute(f"DROP TRIGGER {trigger}")
                c.execute("DROP TABLE fix_blocks_vocab")
                c.execute("DROP TABLE fix_errors_vocab")
                c.execute("DROP TABLE fix_blocks_fts")
            else:
                c.execute("DROP INDEX ix_fix_links_instance")
                c.execute("ALTER TABLE fix_links DROP COLUMN instance_tsv")
            c.execute("DELETE FROM schema_migrations WHERE name = '0027_fix_block_search'")
    with MemoryStore(db, clock=clock) as s:
        names = [r[0] for r in s._core.backend.execute("SELECT name FROM schema_migrations").fetchall()]
        assert "0027_fix_block_search" in names
        terms = sorted(words(instance_text(s.error_signature(ASKED))))
        assert len(s._core.backend.similar_blocks(terms, 10)) == 2
        assert [m.content for m in s.on_task_error(TASK, ASKED).fixes] == [RERUN]


def test_a_block_filled_in_later_becomes_searchable(db, clock):
    with MemoryStore(db, clock=clock) as s:
        m = s.learn_success(AGENT, RERUN, error=TAUGHT[0])
        b = s._core.backend
        with b.write() as c:  # a link written without its block (before 0026, or by an import that lacked it)
            c.execute("UPDATE fix_links SET error_instance = NULL WHERE memory_id = ?", (m.id,))
        terms = sorted(words(instance_text(s.error_signature(TAUGHT[0]))))
        assert b.similar_blocks(terms, 10) == []
        s.learn_success(AGENT, RERUN, error=TAUGHT[0])  # taught again: the link keeps the block it is now given
        assert [r[0] for r in b.similar_blocks(terms, 10)] == [
            r[0] for r in b.execute("SELECT id FROM fix_links WHERE memory_id = ?", (m.id,)).fetchall()
        ]


def test_a_link_is_as_similar_as_the_nearer_of_its_two_texts(db, clock):
    def at(path: str, func: str, code: str, last: str) -> str:
        return f'Traceback (most recent call last):\n  File "{path}", line 12, in {func}\n    {code}\n{last}'

    msg = "ReplicaLagError: replication stream of primary shard alpha stalled on node east"
    taught = [at("/srv/app/sync/stream.py", "replicate", "reader.open_channel(primary_shard)", msg)]
    taught.append(taught[0].replace("alpha", "beta"))
    # the same message from another place: the lines are alike, the blocks less so
    asked = at("/opt/tools/lag_watch.py", "watch", "probe_lag(cluster_state, thresholds_by_node)", msg)
    asked = asked.replace("alpha", "gamma")
    with MemoryStore(db, clock=clock) as s:
        for e in taught:
            s.learn_success(AGENT, "resync the replica", error=e)
        # it fixed another error too: it carries over (the two taught above may be one signature)
        s.learn_success(
            AGENT, "resync the replica", error="WalSegmentMissing: segment 0004 was recycled on the primary"
        )
        a = s.error_signature(asked)
        t = s.error_signature(taught[0])
        line = _jaccard(words(link_text(a)), words(link_text(t)))
        block = _jaccard(words(instance_text(a)), words(instance_text(t)))
        assert line > block >= s.settings.fix_similar_min
        ev = s.on_task_error(TASK, asked).fix_evidence
        assert [e.level for e in ev] == ["similar"] and abs(ev[0].similarity - line) < 1e-9


def test_in_a_large_index_the_search_keeps_its_rarest_words(db, clock, monkeypatch):
    import harness_memory.postgres_backend as pb
    import harness_memory.sqlite_backend as sb

    # "a large index": more links than the search reads postings for (2,000 by default)
    monkeypatch.setattr(sb, "SIMILAR_POSTINGS", 4)
    monkeypatch.setattr(pb, "SIMILAR_POSTINGS", 4)
    with MemoryStore(db, clock=clock) as s:
        for e in TAUGHT:
            s.learn_success(AGENT, RERUN, error=e)
        for n in range(6):  # other failures of another script: every block holds "file", "line", "in", "srv", "py"
            other = (
                "Traceback (most recent call last):\n"
                f'  File "/srv/app/archive_{n}.py", line 4, in <module>\n'
                "    compact(volume)\n"
                f"OSError: disk {n} of the archive is full"
            )
            s.learn_success(AGENT, f"apply patch P-{n}", error=other)
        b = s._core.backend
        asked = words(instance_text(s.error_signature(ASKED)))
        found = {lid for lid, _ in b.similar_blocks(sorted(asked), 50)}
        rerun = "SELECT l.id FROM fix_links l JOIN memories m ON m.id = l.memory_id WHERE m.content = ?"
        # its rarest words ("standby", then the frame's "replicate", "open_channel" ...) are the re-run's errors' only:
        # the common ones are not searched, so the patches' links are not read
        assert found == {r[0] for r in b.execute(rerun, (RERUN,)).fetchall()}
        assert [m.content for m in s.on_task_error(TASK, ASKED).fixes] == [RERUN]
        # a word no link holds matches nothing; only such words: nothing is searched
        assert b.similar_blocks(["zyzzyvaqq"], 50) == []


def test_sqlite_counts_a_word_again_once_the_links_are_a_tenth_fewer_or_more(tmp_path, clock, monkeypatch):
    import harness_memory.sqlite_backend as sb

    monkeypatch.setattr(sb, "SIMILAR_POSTINGS", 2)
    with MemoryStore(tmp_path / "s.db", clock=clock) as s:
        for e in TAUGHT:
            s.learn_success(AGENT, RERUN, error=e)
        patches = [
            s.learn_success(AGENT, f"apply patch P-{n}", error=failure(f"OSError: disk {n} of the archive is full"))
            for n in range(18)
        ]
        b = s._core.backend
        terms = sorted(words(instance_text(s.error_signature(ASKED))))

        def sizes() -> set[int]:
            return {size for key, (_, size) in b._df.items() if key.startswith("fix_blocks_vocab\x00")}

        b.similar_blocks(terms, 50)
        assert sizes() == {20}  # counted at 20 links
        s.forget(patches[-1].id)  # 19 links: within a tenth, the counts stand
        b.similar_blocks(terms, 50)
        assert sizes() == {20}
        for m in patches[-3:-1]:  # 17 links: more than a tenth fewer, every word is counted again
            s.forget(m.id)
        b.similar_blocks(terms, 50)
        assert sizes() == {17}


def test_an_error_asked_before_its_fix_was_taught_finds_it_afterwards(db, clock, monkeypatch):
    # its rare words were counted as held by no link when it was first asked; the counts are cached (while the links
    # stay within a tenth of their number), and those words must still be searched once the fix is taught, however
    # common the other words have become
    import harness_memory.postgres_backend as pb
    import harness_memory.sqlite_backend as sb

    monkeypatch.setattr(sb, "SIMILAR_POSTINGS", 4)
    monkeypatch.setattr(pb, "SIMILAR_POSTINGS", 4)

    def filler(n: int) -> None:  # a link of another script: every block holds "file", "line", "in", "srv", "py"
        other = f'Traceback (most recent call last):\n  File "/srv/app/archive_{n}.py", line 4, in <module>\n'
        s.learn_success(AGENT, f"apply patch P-{n}", error=other + f"    compact(volume)\nOSError: disk {n} is full")

    with MemoryStore(db, clock=clock) as s:
        for n in range(100):
            filler(n)
        assert s.on_task_error(TASK, ASKED).fixes == []  # nothing like it yet: its words are counted (as none)
        for e in TAUGHT:
            s.learn_success(AGENT, RERUN, error=e)
        for n in range(100, 108):  # newer than the fix: the newest links are not its
            filler(n)
        assert [m.content for m in s.on_task_error(TASK, ASKED).fixes] == [RERUN]


def test_links_the_asker_may_not_see_do_not_crowd_out_those_it_may(db, clock):
    with MemoryStore(db, clock=clock) as s:
        for n in range(60):  # more than the candidates a search keeps, in another namespace, written first
            s.learn_success(AGENT, f"python other_{n}.py", error=TAUGHT[n % 2], namespace="elsewhere")
        for e in TAUGHT:
            s.learn_success(AGENT, RERUN, error=e)
        assert [m.content for m in s.on_task_error(TASK, ASKED).fixes] == [RERUN]


def test_postgresql_counts_survive_the_cache_being_emptied_midway(clock, monkeypatch):
    # the cache of word counts is emptied past 200,000 entries; a search whose other words were fresh in it must
    # still have their counts (and another thread may empty it between two reads)
    import harness_memory.postgres_backend as pb
    import pgtestdb

    monkeypatch.setattr(pb, "SIMILAR_POSTINGS", 1)
    url, schema = pgtestdb.new_schema()
    try:
        with MemoryStore(url, clock=clock) as s:
            for e in TAUGHT:
                s.learn_success(AGENT, RERUN, error=e)
            b = s._core.backend
            terms = sorted(words(instance_text(s.error_signature(ASKED))))
            first = b.similar_blocks(terms, 10)  # counted, cached
            assert first
            b._similar_df.update({("instance_tsv", f"filler{n}"): (1, 2) for n in range(200_001)})
            assert b.similar_blocks([*terms, "brandnewword"], 10) == first  # one stale word: the cache is emptied
            assert len(b._similar_df) <= len(terms) + 1
    finally:
        pgtestdb.drop_schema(schema)
