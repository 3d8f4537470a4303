"""Signing method 25 (issue 8): grouping that holds on systems never seen. A template position becomes a variable
only with evidence (``TemplateMiner.EVIDENCE`` distinct words seen there; a masked part is evidence by itself), a
generalisation never leaves a template without a constant token, and masking keeps a message's structure (quotes
around a masked value) while it masks whole values that are not words (object reprs, dates with a month's name)."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import WILDCARD, TemplateMiner, mask_params, tokenize

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=10)
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,20}", fullmatch=True)
_ATTRS = st.lists(
    st.tuples(
        st.from_regex(r"[a-z_]{1,8}", fullmatch=True), st.from_regex(r"[A-Za-z0-9_.,/:'-]{1,12}", fullmatch=True)
    ),
    min_size=1,
    max_size=4,
)


def _repr(name: str, attrs: list[tuple[str, str]]) -> str:
    return "<" + name + " " + " ".join(f"{k}={v}" for k, v in attrs) + ">"


def test_the_pass_through_lines_of_an_access_log_and_a_client_stay_two_groups(store):
    # uvicorn's access line and urllib3's request line hold no constant word once masked; their punctuation differs
    server = [f'127.0.0.1:{p} - "GET /items/{n} HTTP/1.1" {c}' for p, n, c in ((5001, 3, 200), (5002, 7, 404))]
    client = [f'http://127.0.0.1:8771 "GET /items/{n} HTTP/1.1" {c} {b}' for n, c, b in ((4, 200, 8), (9, 500, 21))]
    ids_server = {store.error_signature(t).id for t in server}
    ids_client = {store.error_signature(t).id for t in client}
    assert len(ids_server) == 1 and len(ids_client) == 1 and ids_server != ids_client
    assert store.error_signature(server[0]).template == '<*> - "<*>" <*>'


def test_two_words_apart_after_a_repr_are_two_groups(store):
    pauses = store.error_signature("<_SelectorSocketTransport fd=7 read=idle write=<idle, bufsize=0>> pauses reading")
    resumes = store.error_signature(
        "<_SelectorSocketTransport fd=9 read=polling write=<idle, bufsize=0>> resumes reading"
    )
    again = store.error_signature(
        "<_SelectorSocketTransport fd=12 read=polling write=<idle, bufsize=5>> pauses reading"
    )
    assert pauses.template == "<*> pauses reading" and resumes.id != pauses.id and again.id == pauses.id


def test_a_word_becomes_a_variable_at_the_fourth_distinct_word_and_the_earlier_groups_join_it(store):
    miner = store._core.miner
    words = ["alpha", "beta", "gamma", "delta"]
    sigs = [store.error_signature(f"session for user {w} opened on the console") for w in words]
    assert len({s.id for s in sigs[:3]}) == 3  # two or three words seen: no evidence of a variable yet
    assert sigs[3].template == "session for user <*> opened on the console"
    assert {miner.canonical(s.id) for s in sigs} == {sigs[3].id}
    assert store.error_signature("session for user omega opened on the console").id == sigs[3].id


def test_a_masked_part_is_evidence_enough(store):
    a = store.error_signature("worker red stopped after 3 retries on the main node")
    b = store.error_signature("worker red stopped after many retries on the main node")  # a word meets a number
    assert b.id == a.id


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_WORD, min_size=2, max_size=6, unique=True))
def test_one_group_exactly_when_evidence_is_reached(words):
    with tempfile.TemporaryDirectory() as d, MemoryStore(Path(d) / "m.db") as s:
        sigs = [s.error_signature(f"queue drained by the worker {w} on node east") for w in words]
        ids = {s._core.miner.canonical(x.id) for x in sigs}
        if len(words) >= TemplateMiner.EVIDENCE:
            assert len(ids) == 1
        else:
            assert len(ids) == len(words)


def test_a_generalisation_never_takes_the_last_constant_token(store):
    a = store.error_signature('10.0.0.1:80 - "x" 5')  # <*> - "<*>" <*>
    b = store.error_signature("10.0.0.2:80 10.0.0.3:80 6 7")  # <*> <*> <*> <*>: nothing in common but variables
    assert a.id != b.id


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters='"\n', blacklist_categories=["Cs"]), max_size=30))
def test_a_quoted_value_is_masked_inside_its_quotes(value):
    masked, params = mask_params(f'key "{value}" missing')
    # (a value that is the wildcard itself is text already masked: masking again adds no param, as idempotency asks)
    assert masked == 'key "<*>" missing' and params == ([] if value == WILDCARD else [value])


@settings(max_examples=200, deadline=None)
@given(_NAME, _ATTRS, _WORD)
def test_an_object_repr_is_one_value(name, attrs, word):
    text = f"{_repr(name, attrs)} {word} reading"
    masked, _ = mask_params(text)
    assert masked == f"{WILDCARD} {word} reading"


@settings(max_examples=200, deadline=None)
@given(_NAME, _ATTRS, _NAME, _ATTRS)
def test_a_repr_holding_a_repr_is_one_value(outer, attrs, inner, inner_attrs):
    text = f"Executing {_repr(outer, [*attrs, ('cb', _repr(inner, inner_attrs))])} took 0.12 seconds"
    assert mask_params(text)[0] == "Executing <*> took <*>"


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2090, 1, 1)))
def test_a_date_with_a_month_name_is_one_value(when):
    for fmt in ("%a %b %d %H:%M:%S %Y", "%b %d %H:%M:%S", "%d %b %Y %H:%M"):
        assert mask_params(f"connection from host at {when.strftime(fmt)} closed")[0] == (
            "connection from host at <*> closed"
        )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            _WORD,
            st.builds(_repr, _NAME, _ATTRS),
            st.builds(lambda w: f'"{w}"', _WORD),
            st.builds(lambda w: f"'{w} x'", _WORD),
            st.datetimes(min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2090, 1, 1)).map(
                lambda d: d.strftime("%a %b %d %H:%M:%S %Y")
            ),
            st.from_regex(r"[a-z]{2,5}::[A-Za-z0-9_]{1,8}", fullmatch=True),
            st.from_regex(r"tmp[a-z0-9_]{6,9}", fullmatch=True),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_masking_stays_idempotent_with_the_new_masks(parts):
    once = mask_params(" ".join(parts))[0]
    assert mask_params(once)[0] == once


@pytest.mark.parametrize(
    "text, masked",
    [
        ("Created temporary directory: /tmp/pip-target-knbcp1w4", "Created temporary directory: <*>"),
        ("a template for templates", "a template for templates"),
        ("removed tmpk3j_x9a8 and temp_1234 files", "removed <*> and <*> files"),
    ],
)
def test_temporary_is_a_word_and_a_temp_name_a_value(text, masked):
    assert mask_params(text)[0] == masked


def test_a_cpp_qualified_name_with_digits_is_a_name():
    assert tokenize(mask_params("MutablePO2TS::Shutdown")[0]) == ["MutablePO2TS::Shutdown"]
    assert tokenize(mask_params("MutablePO2TS::RefreshTokenIsAvailable")[0]) != tokenize(
        mask_params("MutablePO2TS::Shutdown")[0]
    )
    assert tokenize("retry 3 of x2") == ["retry", WILDCARD, "of", WILDCARD]  # other words with digits: variables
