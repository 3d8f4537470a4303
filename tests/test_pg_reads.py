"""PostgreSQL reads (issue 10): a read is one REPEATABLE READ snapshot opened by a single BEGIN, the
pooled connection goes back to the default isolation for the writes that follow, and within one
snapshot the keyword statistics are read once (a recall's keyword search and its confidence ask for
the same terms)."""

from __future__ import annotations

import pytest

import pgtestdb
from harness_memory import MemoryStore, postgres_backend


@pytest.fixture
def pg_url():
    url, schema = pgtestdb.new_schema()
    yield url
    pgtestdb.drop_schema(schema)


def test_a_read_is_a_repeatable_read_snapshot_and_writes_stay_read_committed(pg_url):
    with MemoryStore(pg_url) as s:
        b = s._core.backend
        s.remember("pip install fails behind the proxy", type="failure", agent_id="a")
        for _ in range(3):  # the pool hands the same connections out again
            with b.read() as c:
                assert c.execute("SHOW transaction_isolation").fetchone()[0] == "repeatable read"
            with b.write() as c:
                assert c.execute("SHOW transaction_isolation").fetchone()[0] == "read committed"
            assert b.execute("SHOW transaction_isolation").fetchone()[0] == "read committed"


def test_term_statistics_are_read_once_per_snapshot(pg_url, monkeypatch):
    with MemoryStore(pg_url) as s:
        b = s._core.backend
        s.remember("pip install fails behind the proxy: set HTTPS_PROXY", type="failure", agent_id="a")
        seen: list[str] = []
        execute = postgres_backend._Conn.execute

        def counting(conn, sql, params=()):
            seen.append(sql)
            return execute(conn, sql, params)

        monkeypatch.setattr(postgres_backend._Conn, "execute", counting)
        with b.read():
            first = b.term_frequencies(["pip", "proxy", "nowhere"])
            again = b.term_frequencies(["pip", "proxy", "nowhere"])
            other = b.term_frequencies(["proxy"])
        assert first == again == (first[0], {"pip": 1, "proxy": 1, "nowhere": 0}) and other[1] == {"proxy": 1}
        assert sum("JOIN memories_fts_vocab v" in q for q in seen) == 2
        s.remember("the proxy needs HTTPS_PROXY in pip.conf too", type="failure", agent_id="a")
        with b.read():  # a new snapshot reads them again
            assert b.term_frequencies(["pip", "proxy", "nowhere"])[1]["proxy"] == 2
        assert sum("JOIN memories_fts_vocab v" in q for q in seen) == 3
        seen.clear()
        s.recall("pip proxy", agent_id="a")
        assert sum("JOIN memories_fts_vocab v" in q for q in seen) == 1
