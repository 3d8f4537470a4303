"""Signing method 41: two more shapes of one value (docs/signatures.md, "Method 41"). An object's repr with a colon
after its name (aiocoap's ``<aiocoap.Message: GET to <...>, 1 option(s), ...>``, Django's ``<User: alice>``) is one
value, as ``<Name ...>`` is since method 25; and a run of ``VALUE_RUN`` or more variables in a row (pymodbus's byte
dumps, ``Processing: 0x0 0x2 0x0 0x0 0x0 0x6``) is one variable whatever its length."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import harness_memory.error_signatures as es
from harness_memory import MemoryStore
from harness_memory.error_signatures import SIGNATURE_METHOD, WILDCARD, mask_params, tokenize


def test_the_method_is_41_or_later():
    assert SIGNATURE_METHOD >= 41


@pytest.mark.parametrize(
    "text, masked",
    [
        (
            "Sending message <aiocoap.Message: GET to <UDP6EndpointAddress 127.0.0.1>, 1 option(s), token 12ab CON, MID 5>",
            f"Sending message {WILDCARD}",
        ),
        ("user <User: alice> logged in", f"user {WILDCARD} logged in"),
        ("got <Task pending name='x'> here", f"got {WILDCARD} here"),  # the form without a colon, as before
        ("a <b>: c", "a <b>: c"),  # no space after the name's colon: no repr
        ("if x <y: z", "if x <y: z"),  # never closed: no repr
    ],
)
def test_a_repr_with_a_colon_after_its_name_is_one_value(text, masked):
    assert mask_params(text)[0] == masked


def test_messages_of_every_method_and_size_are_one_statement(tmp_path):
    texts = [
        "Incoming message <aiocoap.Message: PUT from <UDP6EndpointAddress 127.0.0.1:36696>, 2 option(s), 18 byte(s)"
        " payload, token 8c21 CON, MID 4242>",
        "Incoming message <aiocoap.Message: EMPTY from <UDP6EndpointAddress 127.0.0.1:36696>, empty token, ACK, MID 7>",
        "Incoming message <aiocoap.Message: 2.05 Content from <UDP6EndpointAddress 127.0.0.1>, 1 option(s), token 1 NON, MID 9>",
    ]
    with MemoryStore(tmp_path / "m.db") as s:
        assert len({s.error_signature(t).id for t in texts}) == 1


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("Processing: 0x0 0x2 0x0 0x0 0x0 0x6 0x2", ["Processing:", WILDCARD]),
        ("send: 0x1 0x84 0x2 extra data:", ["send:", WILDCARD, "extra", "data:"]),
        ("a 1 2 b 3 4 5 c 6", ["a", WILDCARD, WILDCARD, "b", WILDCARD, "c", WILDCARD]),  # runs of two stay
        ("1 2 3", [WILDCARD]),
        ("x y", ["x", "y"]),
    ],
)
def test_a_run_of_three_or_more_variables_is_one(text, tokens):
    assert tokenize(text) == tokens


def test_byte_dumps_of_any_length_are_one_statement(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        ids = {
            s.error_signature("recv: " + " ".join(hex(b) for b in range(n)) + " extra data: ").id
            for n in (3, 7, 12, 25)
        }
        assert len(ids) == 1
        assert s.error_signature("send: 0x0 0x2 0x0 0x6").id not in ids


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "b:", "1", "0x2", "<*>", "x<*>", "word"]), max_size=20))
def test_runs_collapse_idempotently_and_keep_the_words(words):
    once = tokenize(" ".join(words))
    assert tokenize(" ".join(once)) == once
    assert [t for t in once if WILDCARD not in t and not any(c.isdigit() for c in t)] == [
        w for w in words if WILDCARD not in w and not any(c.isdigit() for c in w)
    ]
    run = 0
    for t in once:
        run = run + 1 if t == WILDCARD else 0
        assert run < es.VALUE_RUN


def test_the_rule_switches_off(monkeypatch):
    monkeypatch.setattr(es, "VALUE_RUN", None)
    assert tokenize("Processing: 0x0 0x2 0x0") == ["Processing:", WILDCARD, WILDCARD, WILDCARD]


def test_arrows_inside_a_repr_are_text_method42():
    # kombu's consumer repr: queues bound to exchanges, printed with arrows, nested four deep
    text = (
        "basic_consume(queue='orders.cancel', callback=<bound method Consumer._receive_callback of <Consumer: "
        "[<Queue orders.cancel -> <Exchange orders(direct) bound to chan:1> -> cancel bound to chan:1>, <Queue a.b -> "
        "<Exchange alerts(fanout) bound to chan:1> ->  bound to chan:1>]>>, nowait=True)"
    )
    masked, params = mask_params(text)
    assert masked == f"basic_consume(queue='{WILDCARD}', callback={WILDCARD}, nowait=True)"
    assert any(p.startswith("<bound method") and p.endswith("]>>") for p in params)  # the whole repr, one param
    assert mask_params("a <Queue q -> x> b")[0] == f"a {WILDCARD} b"
    assert mask_params("if a <b -> c")[0] == "if a <b -> c"  # never closed: no repr


def _nested(depth: int) -> str:
    text = "v"
    for i in range(depth):
        text = f"<N{i} x {text}>"
    return f"got {text} here"


def test_a_repr_nested_six_deep_is_one_value_and_seven_is_not_method42():
    # five rounds of the rule, the first taking two levels (a repr may hold one repr without brackets inside): the
    # bound is what keeps a pathological nesting from costing more rounds
    assert mask_params(_nested(6))[0] == f"got {WILDCARD} here"
    assert mask_params(_nested(7))[0] != f"got {WILDCARD} here"
