"""``mask_params``' nested params after an object's repr (mutation testing of its rewrite, 2026-11-27: a sample of 30
of its 154 sites, benchmarks/mutation/mask_params.json).

A repr is masked first, in rounds (innermost first); a later mask whose match holds the repr's ``<*>`` (a quoted
value, ``key "a <Foo x=1>" missing``) gives one param, the original text of its whole match. That needs every
repr round that masked something to be remembered once: a round forgotten leaves the quoted value's ``<*>`` without
its param (``ValueError`` from the strict zip), a round's matches kept past it (remembered again with the next
round's text) give the quoted value an earlier repr's text (``'a <B y>'`` for ``'a <C z>'``). The reprs below are in
the shapes of asyncio's, requests' and Python's default ones.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import WILDCARD, mask_params


def test_a_quoted_value_holding_a_repr_is_one_param():
    assert mask_params('key "a <Foo x=1>" missing') == ('key "<*>" missing', ["a <Foo x=1>"])
    assert mask_params("task 'done: <Task finished>' ok") == ("task '<*>' ok", ["done: <Task finished>"])


def test_a_quoted_value_holding_a_repr_and_a_number_is_one_param():
    text = 'handler "cb=<Handle f() at 0x7f3a> after 12 ms" was slow'
    masked, params = mask_params(text)
    assert masked == 'handler "<*>" was slow'
    assert params == ["cb=<Handle f() at 0x7f3a> after 12 ms"]


_REPRS = st.sampled_from(
    [
        "<Foo x=1>",
        "<Task pending name='Task-1'>",
        "<Handle cb=<TimerHandle when=12.5 f()> at 0x7f>",
        "<object object at 0x7f3a1c2b>",
        "<function main at 0x10>",
        "<Response [200]>",
        "<A x>",
    ]
)
_WORDS = st.text(alphabet="abcdefghij ,:=", min_size=1, max_size=12).filter(lambda s: s.strip() == s and s)


@settings(max_examples=150, deadline=None)
@given(before=_WORDS, repr_=_REPRS, after=st.sampled_from(["", " done", " at 3"]), quote=st.sampled_from(['"', "'"]))
def test_a_quoted_value_holding_a_repr_is_its_own_text(before, repr_, after, quote):
    value = f"{before} {repr_}{after}"
    if quote in value:
        return  # (the quote would end the value early)
    masked, params = mask_params(f"got {quote}{value}{quote} back")
    assert masked == f"got {quote}{WILDCARD}{quote} back"
    assert params == [value]


def test_reprs_before_a_quoted_value_holding_one_keep_their_own_params():
    # each repr round's matches are remembered once: the quoted value's repr is its own, not an earlier one's
    text = "<A x> <B y> 'retry <C z>' failed"
    assert mask_params(text) == ("<*> <*> '<*>' failed", ["<A x>", "<B y>", "retry <C z>"])


@settings(max_examples=150, deadline=None)
@given(reprs=st.lists(_REPRS, min_size=1, max_size=4), inner=_REPRS, before=_WORDS)
def test_every_param_of_reprs_and_a_quoted_value_is_its_own_text_in_order(reprs, inner, before):
    value = f"{before} {inner}"
    if "'" in value:
        return
    text = " ".join(reprs) + f" '{value}' failed"
    masked, params = mask_params(text)
    assert masked == " ".join([WILDCARD] * len(reprs)) + f" '{WILDCARD}' failed"
    assert params == [*reprs, value]
