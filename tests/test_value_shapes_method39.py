"""Signing method 39: a value known by its shape alone (docs/signatures.md, "Method 39"). A random identifier of
letters (a session id that happens to hold no digit) is a variable, as a token holding a digit is; and two words that
are both values of one kind by their form (two upper-case names, two names led by a slash) are evidence of a
variable at their position by themselves, without the four distinct words method 25 waits for."""

from __future__ import annotations

import inspect
import random
import re
import string

import pytest
from hypothesis import given, settings, strategies as st

import harness_memory.error_signatures as es
from harness_memory import MemoryStore
from harness_memory.error_signatures import SIGNATURE_METHOD, WILDCARD, TemplateMiner, mask_params, random_id, tokenize


def test_the_method_is_39_or_later():
    assert SIGNATURE_METHOD >= 39


@pytest.mark.parametrize(
    "token",
    [
        "HrbKheaNMhIbvPzRAAAt:",  # Engine.IO session ids with no digit (python-engineio 4.15)
        "'OqrhivMdtmUBnyy-AAAw',",
        "H_NStQBkiTcNpu_UAABQ",
        "UaJpFzrjJ-KMDxniAAAC",
    ],
)
def test_a_random_identifier_of_letters_is_a_variable(token):
    assert random_id(token)
    assert tokenize(f"{token} Sending packet PING") == [WILDCARD, "Sending", "packet", "PING"]


@pytest.mark.parametrize(
    "token",
    [
        "XMLHttpRequest",
        "getHTTPResponseCode",
        "IllegalArgumentException:",
        "DraggableOffsetBox",
        "NameSystem.allocateBlock:",  # a qualified name: not one run of letters
        "authentication",  # one case only
        "CONNECTION_REFUSED",
        "ModuleNotFoundError:",
        "onInterceptTouchEvent",
        "setSystemUiVisibility",
        "PacketResponder",
        "jsonschema_specifications",
        "AbcDef",  # too short to tell
    ],
)
def test_identifiers_and_words_are_not_random(token):
    assert not random_id(token)


def test_random_letters_are_mostly_read_as_identifiers_and_real_names_are_not():
    # the shape rule's two error rates, measured on the kind of text each one is about: ids drawn as Engine.IO
    # draws its session ids (base64url, 20 characters, here without digits), and the words of this module's source
    rng = random.Random(8)
    alphabet = string.ascii_letters + "-_"
    ids = ["".join(rng.choice(alphabet) for _ in range(20)) for _ in range(2000)]
    assert sum(map(random_id, ids)) / len(ids) >= 0.8
    names = set(re.findall(r"[A-Za-z_][A-Za-z_-]{9,}", inspect.getsource(es)))
    flagged = [n for n in names if random_id(n)]
    assert len(flagged) <= 0.01 * len(names), flagged


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.ascii_lowercase + "_-", min_size=1, max_size=40))
def test_one_case_is_never_random(word):
    assert not random_id(word)
    assert not random_id(word.upper())


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=string.ascii_letters + string.digits + "-_:',", max_size=40))
def test_tokenize_is_idempotent_with_random_ids(text):
    once = " ".join(tokenize(text))
    assert tokenize(once) == once.split()


def test_sessions_with_and_without_digits_share_the_statements_signature(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        a = s.error_signature("JEfSt7qxLWeHu8dgAAAA: Upgrade to websocket successful")
        b = s.error_signature("HrbKheaNMhIbvPzRAAAt: Upgrade to websocket successful")
        assert a.id == b.id


@pytest.mark.parametrize("a, b", [("[/]", "[/chat]"), ("/", "/chat"), ("/api:", "/health:"), ("(/a.txt)", "(/b)")])
def test_two_values_of_one_kind_by_their_form(a, b):
    assert TemplateMiner._values(a, b)


@pytest.mark.parametrize(
    "a, b",
    [
        ("opened", "closed"),  # words: a statement's own, until method 25's evidence says otherwise
        ("[/]", "/chat"),  # in other punctuation
        ("GET", "/chat"),
        ("Error", "Warning"),
        # upper-case names: an enumeration's members, or two failures a memory must not pool
        ("ECONNREFUSED", "ETIMEDOUT"),
        ("FAILURE", "TIMEOUT"),
        ("MESSAGE", "CLOSE"),
    ],
)
def test_words_of_other_forms_are_not_values(a, b):
    assert not TemplateMiner._values(a, b)


def test_a_namespace_led_by_a_slash_is_one_statements_variable(tmp_path):
    # Socket.IO's namespace: ``/`` and ``/chat``, two values seen, never the four words method 25 waits for
    with MemoryStore(tmp_path / "m.db") as s:
        assert (
            s.error_signature('Emitting event "echo" [/]').id == s.error_signature('Emitting event "news" [/chat]').id
        )


def test_two_error_codes_in_upper_case_stay_two_failures(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        refused = s.error_signature("Error: connect ECONNREFUSED while calling the billing service")
        timed_out = s.error_signature("Error: connect ETIMEDOUT while calling the billing service")
        assert refused.id != timed_out.id
        assert (
            s.error_signature("job finished with status FAILURE").id
            != s.error_signature("job finished with status TIMEOUT").id
        )


@pytest.mark.parametrize(
    "a, b, before",
    [("change", "changes", WILDCARD), ("files,", "file,", WILDCARD), ("box", "boxes", WILDCARD)],
)
def test_a_noun_and_its_plural_after_a_variable_are_one_word_of_a_count(a, b, before):
    assert TemplateMiner._values(a, b, before)


@pytest.mark.parametrize(
    "a, b, before",
    [
        ("change", "changes", "the"),
        ("a", "as", WILDCARD),
        ("change", "changed", WILDCARD),
        ("file,", "files", WILDCARD),
    ],
)
def test_other_pairs_of_words_are_not_a_count(a, b, before):
    assert not TemplateMiner._values(a, b, before)


def test_a_count_in_the_singular_and_the_plural_is_one_statement(tmp_path):
    # watchfiles' ``%d change%s detected: %s``
    with MemoryStore(tmp_path / "m.db") as s:
        one = s.error_signature("1 change detected: {(<Change.added: 1>, '/tmp/x/f10.txt')}")
        four = s.error_signature(
            "4 changes detected: {(<Change.deleted: 3>, '/tmp/x/f11.txt'), (<Change.added: 1>, 'y')}"
        )
        assert one.id == four.id


def test_two_statements_that_differ_by_a_word_stay_apart(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        assert (
            s.error_signature("worker pool connection opened").id
            != s.error_signature("worker pool connection closed").id
        )


def test_the_rules_switch_off(tmp_path, monkeypatch):
    monkeypatch.setattr(es, "_RANDOM_IDS", False)
    monkeypatch.setattr(TemplateMiner, "VALUE_WORDS", frozenset())
    assert tokenize("HrbKheaNMhIbvPzRAAAt: Sending") == ["HrbKheaNMhIbvPzRAAAt:", "Sending"]
    with MemoryStore(tmp_path / "m.db") as s:
        assert (
            s.error_signature("Sending packet MESSAGE data x").id != s.error_signature("Sending packet CLOSE data x").id
        )


@pytest.mark.parametrize(
    "text, masked, params",
    [
        (
            "Processing ensurepip/_bundled/setuptools-65.5.0-py3-none-any.whl",
            f"Processing {WILDCARD}",
            ["ensurepip/_bundled/setuptools-65.5.0-py3-none-any.whl"],
        ),
        ("cannot load lib/libfoo-1.2.so now", f"cannot load {WILDCARD} now", ["lib/libfoo-1.2.so"]),
        ("connect to api.github.com failed", f"connect to {WILDCARD} failed", ["api.github.com"]),  # still a host
        ("Processing /tmp/x/okpkg", f"Processing {WILDCARD}", ["/tmp/x/okpkg"]),
    ],
)
def test_a_files_name_may_hold_dots_and_a_host_is_no_paths_segment(text, masked, params):
    assert mask_params(text) == (masked, params)


def test_an_absolute_and_a_relative_path_are_one_statements_variable(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        a = s.error_signature("Processing /tmp/hm-syslog-pip-487n139c/okpkg")
        b = s.error_signature("Processing ensurepip/_bundled/setuptools-65.5.0-py3-none-any.whl")
        assert a.id == b.id


@pytest.mark.parametrize(
    "token, expected",
    [
        ("FnqRBXOtAGy", True),  # two odd parts of five (Fnq, A): the least a random id needs
        ("QAbeRBecSDedEfeFigGihHij", True),  # three odd parts of ten (Q, R, S): 30% exactly
        ("QAbeRBecDedEfeFigGihHijKol", False),  # two odd parts of ten: 20%
        ("AbeBecDedEfeFigGihHij", False),  # word-like parts only
    ],
)
def test_the_shapes_bounds(token, expected):
    assert random_id(token) is expected
