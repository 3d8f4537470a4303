"""Signing method 38: a structured value, a bracketed collection (a JSON object or array, a Python dict, list or set
repr), is one variable whatever its size and shape (docs/signatures.md, "Method 38"). A bracketed word and a record
of named fields keep their words; a collection cut by the 2,000-character bound runs to the end."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import SIGNATURE_METHOD, WILDCARD, _structured_spans, mask_params


def test_the_method_is_38_or_later():
    assert SIGNATURE_METHOD >= 38


# real shapes: Selenium's command log line (a verb, a URL, a JSON body), a remote response with a JSON body and a
# headers dict, an Engine.IO-style packet with a JSON payload
@pytest.mark.parametrize(
    "a, b",
    [
        (
            "POST http://localhost:35825/session/d15c/element {'using': 'css selector', 'value': '#q'}",
            "POST http://localhost:41001/session/77aa/element/f.AA0C/value {'text': 'hello', 'value': ['h', 'e', 'l']}",
        ),
        (
            'Remote response: status=200 | data={"value":{"capabilities":{"acceptInsecureCerts":false}}}'
            " | headers=HTTPHeaderDict({'Content-Length': '51', 'Content-Type': 'application/json'})",
            'Remote response: status=404 | data={"value":{"error":"no such element","message":"Unable to locate"}}'
            " | headers=HTTPHeaderDict({'Content-Length': '977'})",
        ),
        ('job 7 sent payload {"n": 3, "tags": ["a", "b"]} to worker', "job 12 sent payload [1, 2, 3, 4, 5] to worker"),
        ("job 7 sent payload {} to worker", 'job 9 sent payload {"n": 1} to worker'),
    ],
)
def test_a_collection_of_any_size_is_one_variable(tmp_path, a, b):
    assert mask_params(a)[0] == mask_params(b)[0]
    with MemoryStore(tmp_path / "m.db") as s:
        assert s.error_signature(a).id == s.error_signature(b).id


def test_a_bracketed_value_of_a_name_is_one_variable_whatever_it_holds():
    # Chromium's keep-alive list: one item or three, the value of ``keep_alives=``
    one = "AddKeepAlive(Default, kBrowserWindow). keep_alives=[kBrowserWindow (1)]"
    three = "AddKeepAlive(Default, kBrowserWindow). keep_alives=[kBrowserWindow (1), kSessionDataDeleter (1), kX (1)]"
    assert (
        mask_params(one)[0] == mask_params(three)[0] == f"AddKeepAlive(Default, kBrowserWindow). keep_alives={WILDCARD}"
    )
    assert _structured_spans("x[0] and y [word]") == []  # a subscript, a bracketed word


def test_the_collection_is_the_param():
    masked, params = mask_params("sent {'a': [1, 2], 'b': 'x]y'} now")
    assert masked == f"sent {WILDCARD} now"
    assert params == ["{'a': [1, 2], 'b': 'x]y'}"]  # the bracket inside a quoted string closes nothing


@pytest.mark.parametrize(
    "text",
    [
        "Received disconnect from 10.0.0.1: 11: Bye Bye [preauth]",  # a bracketed word
        "worker {main} stopped",
        "Skipping, withExcluded: false, tr.intent:Intent { act=android.intent.action.MAIN flg=0x10840000 }",  # a record
        # a record with separators and brackets inside (Android's MotionEvent): its field names are the format's
        "onInterceptTouchEvent MotionEvent { action=ACTION_UP, actionButton=0, id[0]=0, x[0]=317.0, y[0]=419.0 }",
        "[EXIT] worker stopped",
    ],
)
def test_a_bracketed_word_or_a_record_of_named_fields_keeps_its_words(text):
    assert _structured_spans(text) == []


def test_records_with_other_fields_present_stay_apart(tmp_path):
    a = "Skipping, withExcluded: false, tr.intent:Intent { act=android.intent.action.MAIN flg=0x10840000 cmp=x/.A }"
    b = "Skipping, withExcluded: false, tr.intent:Intent { flg=0x10804000 cmp=com.android.systemui/.R bnds=[0,0][1,1] }"
    with MemoryStore(tmp_path / "m.db") as s:
        assert s.error_signature(a).id != s.error_signature(b).id


def test_a_collection_cut_by_the_bound_runs_to_the_end():
    head = 'Remote response: status=200 | data={"value":"'
    text = head + "iVBORw0KGgo" * 400  # a screenshot's base64, cut at 2,000 characters before it closes
    masked, _ = mask_params(text[:2000])
    assert masked == f"Remote response: status={WILDCARD} | data={WILDCARD}"
    # a short text is not cut: an unclosed bracket there is no value
    assert _structured_spans('data={"value": "abc') == []


def test_unbalanced_and_mismatched_brackets_mask_nothing_wrongly():
    assert _structured_spans("expected ] got [a, b") == []
    assert _structured_spans("a {b, c] d") == []
    assert _structured_spans("a {b, c] then [1, 2]") == [(14, 20)]  # the mismatch dropped the open brace
    assert _structured_spans("(see [1, 2]) then") == [(5, 11)]  # inside parentheses: still a value


def test_the_mask_is_a_pass_like_the_others_and_can_be_switched_off(monkeypatch):
    from harness_memory import error_signatures as es

    # benchmarks/signatures.py's variants read each mask's ``pattern`` and switch method 38 off by ``_STRUCTURED``
    assert all(isinstance(getattr(g[0], "pattern", None), str) for g in es._MASK_GUARDS)
    monkeypatch.setattr(es, "_STRUCTURED", False)
    assert mask_params("sent {'a': 'b', 'c': 'd'} now")[0] == "sent {'<*>': '<*>', '<*>': '<*>'} now"


def test_the_scan_is_linear():
    text = "[" * 1999 + "x"  # every bracket open, none closed
    start = time.process_time()
    for _ in range(50):
        mask_params(text)
    assert time.process_time() - start < 1.0


_scalars = st.one_of(
    st.integers(-(10**6), 10**6), st.booleans(), st.none(), st.text("abcxyz _-./:", min_size=0, max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text("abcdef_", min_size=1, max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    value=st.one_of(
        st.lists(_values, max_size=5), st.dictionaries(st.text("abcdef_", min_size=1, max_size=6), _values, max_size=5)
    )
)
def test_any_json_or_repr_collection_is_one_variable(value):
    for shown in (json.dumps(value), json.dumps(value, separators=(",", ":")), repr(value)):
        masked, params = mask_params(f"worker sent {shown} to queue")
        assert masked == f"worker sent {WILDCARD} to queue", shown
        assert params == [shown]
        assert mask_params(masked)[0] == masked  # idempotent


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab {}[]()'\":,=;\\x", max_size=80))
def test_spans_are_ordered_disjoint_and_bracketed(text):
    spans = _structured_spans(text)
    end = -1
    for s, e in spans:
        assert end <= s < e <= len(text)
        assert text[s] in "{[" and text[e - 1] in "}]"
        end = e
    mask_params(text)  # never raises


def test_a_template_of_variables_and_punctuation_joins_no_message_of_another_length(tmp_path):
    # urllib3's request line and http.server's request log, both all variables but their punctuation: one token
    # apart, and two statements (before method 38 the second joined the first's group)
    with MemoryStore(tmp_path / "m.db") as s:
        urllib3 = s.error_signature('http://localhost:35825 "POST /session HTTP/1.1" 200 0')
        assert urllib3.template == '<*> "<*>" <*> <*>'
        server = s.error_signature('127.0.0.1 - "GET /index.html HTTP/1.1" 200 -')
        assert server.id != urllib3.id


def test_a_template_with_a_word_still_joins_one_more_variable(tmp_path):
    # websockets' frame of 4 bytes and of 5 bytes: one variable token apart, the word BINARY in the template
    with MemoryStore(tmp_path / "m.db") as s:
        four = s.error_signature("> BINARY 00 10 00 20 [4 bytes]")
        five = s.error_signature("> BINARY 00 10 00 20 70 [5 bytes]")
        assert five.id == four.id


@settings(max_examples=60, deadline=None)
@given(
    punct=st.lists(st.sampled_from(['"<*>"', "-", "|", "->", "'<*>'", "::"]), min_size=1, max_size=3),
    extra=st.sampled_from(["-", "|", "=>"]),
)
def test_no_variable_length_join_without_a_constant_word(tmp_path_factory, punct, extra):
    from harness_memory.error_signatures import TemplateMiner

    tpl = ["<*>", *punct, "<*>"]
    assert TemplateMiner._words(tpl) == 0
    with MemoryStore(tmp_path_factory.mktemp("m") / "m.db") as s:
        miner = s._core.miner
        first = miner.sign(tpl, None, "unknown", None)[0]
        longer = [*tpl[:-1], extra, "<*>"]  # one more token: a template of the neighbouring length
        assert miner.sign(longer, None, "unknown", None)[0] != first
