"""Task signatures as harness_memory/tasks.py documents them: ``category:agent_type:effort:terms``, the
coarse fields under each of their names, light stemming, stop words, the description's terms when the
title is short, the bounds on fields and terms, and the refusals."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness_memory import InvalidInputError
from harness_memory.tasks import task_signature


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("libraries", "library"),  # ies -> y
        ("caching", "cach"),  # ing
        ("parsed", "pars"),  # ed
        ("boxes", "box"),  # es
        ("tokens", "token"),  # s
        ("class", "class"),  # ss is not a plural
        ("ties", "tie"),  # 'ies' and 'es' would leave under 3 letters: only the 's' goes
        ("tie", "tie"),
        ("sing", "sing"),
        ("bus", "bus"),
        ("owed", "owed"),
        ("parser", "parser"),  # no suffix: unchanged
    ],
)
def test_title_words_are_stemmed_lightly(word, stem):
    assert task_signature({"title": f"{word}", "category": "c"}) == f"c:any:any:{stem}"


def test_a_stem_of_exactly_three_letters_is_stemmed():
    assert task_signature({"title": "cats", "category": "c"}) == "c:any:any:cat"
    assert task_signature({"title": "babies", "category": "c"}) == "c:any:any:baby"
    assert task_signature({"title": "boxing", "category": "c"}) == "c:any:any:box"


def test_plurals_and_tenses_share_a_signature():
    assert task_signature("cached parsers") == task_signature("caching the parser") == "any:any:any:cach-parser"


def test_the_harness_verbs_are_not_terms():
    assert task_signature("fix the parser") == task_signature("add parser") == "any:any:any:parser"
    for verb in ("make", "update", "use", "new", "please", "task", "implement", "support"):
        assert task_signature(f"{verb} parser") == "any:any:any:parser"


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ({"category": "bug", "agent_type": "build", "effort": "s"}, "bug:build:s"),
        ({"type": "bug", "owner": "build", "size": "s"}, "bug:build:s"),
        ({"kind": "bug", "agent": "build", "estimate": "s"}, "bug:build:s"),
    ],
)
def test_each_coarse_field_is_read_under_each_of_its_names(names, expected):
    assert task_signature({"title": "parser lexer cache", **names}) == f"{expected}:cache-lexer-parser"


def test_the_first_given_name_of_a_field_wins():
    sig = task_signature({"title": "parser", "category": "bug", "type": "feature", "kind": "chore"})
    assert sig.startswith("bug:")
    assert task_signature({"title": "parser", "category": None, "type": "feature"}).startswith("feature:")


def test_an_object_with_attributes_signs_like_a_mapping():
    obj = SimpleNamespace(title="parser lexer cache", category="bug", agent_type="build", effort="s")
    assert task_signature(obj) == task_signature(vars(obj))
    named = SimpleNamespace(name="parser lexer cache", body="ignored", type="bug")
    assert task_signature(named) == "bug:any:any:cache-lexer-parser"


def test_coarse_fields_are_normalised_and_bounded_at_forty_characters():
    assert task_signature({"title": "parser", "category": "  Big Bug!  "}) == "big-bug:any:any:parser"
    forty = "a" * 40
    assert task_signature({"title": "parser", "category": forty}).split(":")[0] == forty
    assert task_signature({"title": "parser", "category": forty + "b"}).split(":")[0] == forty
    assert task_signature({"title": "parser", "category": "!!!"}).startswith("any:")  # nothing left: any
    assert task_signature({"title": "parser", "effort": 3}).split(":")[2] == "3"


def test_terms_are_sorted_deduplicated_and_at_most_max_terms():
    title = "zeta yak xenon wren vole urchin tapir"
    assert task_signature(title) == "any:any:any:urchin-vole-wren-xenon-yak-zeta"  # the first six, sorted
    assert task_signature(title, max_terms=2) == "any:any:any:yak-zeta"
    assert task_signature("parser parser parsers") == "any:any:any:parser"


def test_a_short_title_borrows_terms_from_the_description_up_to_three():
    one = task_signature({"title": "parser", "description": "lexer cache tokens grammar"})
    assert one == "any:any:any:cache-lexer-parser"
    two = task_signature({"title": "parser lexer", "description": "lexer cache tokens"})
    assert two == "any:any:any:cache-lexer-parser"  # lexer is not counted twice
    three = task_signature({"title": "parser lexer cache", "description": "tokens grammar"})
    assert three == "any:any:any:cache-lexer-parser"  # three title terms: the description is not read
    assert task_signature({"title": "", "body": "lexer", "category": "c"}) == "c:any:any:lexer"


def test_a_category_alone_signs_with_any_terms():
    assert task_signature({"title": "the of and", "category": "bug"}) == "bug:any:any:any"


def test_a_long_title_is_signed_by_its_own_terms_only():
    sig = task_signature({"title": "alpha bravo charlie delta echo", "description": "foxtrot golf hotel"})
    assert sig == "any:any:any:alpha-bravo-charlie-delta-echo"


@pytest.mark.parametrize("bad", [None, b"parser", 3, 2.5, True])
def test_values_that_are_not_tasks_are_refused_saying_what_a_task_is(bad):
    with pytest.raises(InvalidInputError, match="title string, a mapping or an object"):
        task_signature(bad)


@pytest.mark.parametrize("task", [{"title": 3}, {"title": "parser", "description": ["x"]}])
def test_a_title_or_description_that_is_not_text_is_refused(task):
    with pytest.raises(InvalidInputError, match="^task title and description must be strings$"):
        task_signature(task)


@pytest.mark.parametrize("task", [{"title": "the of and"}, {}])
def test_a_task_with_nothing_to_sign_is_refused(task):
    with pytest.raises(InvalidInputError, match="no title terms and no category"):
        task_signature(task)


def test_each_term_is_cut_at_forty_characters():
    forty, longer = "k" * 40, "q" * 41
    assert task_signature(forty) == f"any:any:any:{forty}"
    assert task_signature(longer) == f"any:any:any:{'q' * 40}"


def test_a_title_of_long_words_still_starts_and_completes_a_task(tmp_path):
    from harness_memory import MemoryStore

    title = "investigate " + " ".join(ch * 300 for ch in "abcdef")  # hashes, URLs: valid titles of 2000 characters
    task = {"id": "T1", "title": title[:2000], "agent_id": "a"}
    with MemoryStore(tmp_path / "t.db") as s:
        ctx = s.on_task_start(task)
        assert len(ctx.task_signature) < 400
        out = s.on_task_complete(task, {"success": True, "summary": "done"}, context=ctx)
        assert out["memory"].task_signature == ctx.task_signature
