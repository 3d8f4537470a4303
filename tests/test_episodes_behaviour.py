"""Reflection as documented in harness_memory/episodes.py: what a summariser's answer becomes (bullets,
PATTERN lines, at most max_facts, unusable lines and answers), the extractive path's choices (sqrt(n)
sentences, too-short sentences skipped, near repeats folded into one fact with both sources, facts of
several episodes are patterns), what is written (importance, tags, metadata, the content bound), the
idle bound, and per-agent threads."""

from __future__ import annotations

import logging

import pytest

from harness_memory import MemoryStore, Settings
from harness_memory.episodes import MAX_FACTS, extract
from harness_memory.testing import ManualClock

TURNS = [
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "Melanie painted a sunrise with her kids last week.",
    "Caroline is researching adoption agencies because she wants to be a mom.",
]


class Canned:
    """A summariser that answers a fixed text and keeps what it was asked."""

    def __init__(self, answer):
        self.answer, self.asked = answer, []

    def summarise(self, texts, *, instruction):
        self.asked.append((list(texts), instruction))
        return self.answer


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "e.db", clock=ManualClock()) as s:
        yield s


def _thread(store, turns=TURNS, thread="conv-1", agent="a", **kw):
    return [store.remember(t, type="episode", agent_id=agent, thread_id=thread, **kw) for t in turns]


def test_a_summarisers_lines_become_facts_and_patterns_linked_to_every_episode(store):
    eps = _thread(store)
    answer = (
        "- Caroline attends an LGBTQ support group.\n"
        "* Melanie paints with her kids.\n"
        "1. Caroline researches adoption agencies.\n"
        "2) PATTERN: Caroline keeps looking for community support.\n"
        "\n"
        "ok\n"  # fewer than two content words: not a fact
    )
    canned = Canned(answer)
    made = store.reflect(thread_id="conv-1", summariser=canned)
    assert [m.content for m in made] == [
        "Caroline attends an LGBTQ support group.",
        "Melanie paints with her kids.",
        "Caroline researches adoption agencies.",
        "Caroline keeps looking for community support.",
    ]
    assert [m.type for m in made] == ["fact", "fact", "fact", "pattern"]
    assert [m.importance for m in made] == [0.6, 0.6, 0.6, 0.7]
    for m in made:
        assert m.metadata == {"thread_id": "conv-1", "reflected_from": 3, "method": "summariser"}
        assert [s.id for s in store.reflection_sources(m.id)] == [e.id for e in eps]
    texts, instruction = canned.asked[0]
    assert texts == TURNS and f"at most {MAX_FACTS} lines" in instruction


def test_a_summariser_gives_at_most_max_facts(store):
    _thread(store)
    answer = "\n".join(f"Caroline said fact number {k} about adoption." for k in range(20))
    assert len(store.reflect(summariser=Canned(answer))) == MAX_FACTS


@pytest.mark.parametrize("answer", ["ok\nyes\n- hi", "", None, 42])
def test_an_unusable_answer_falls_back_to_extraction_with_a_warning(store, caplog, answer):
    _thread(store)
    with caplog.at_level(logging.WARNING, logger="harness_memory.episodes"):
        made = store.reflect(summariser=Canned(answer))
    assert made and all(m.metadata["method"] == "extractive" for m in made)
    assert "reflected extractively instead" in caplog.text


def test_extraction_keeps_about_the_square_root_of_the_sentences():
    words = "apple bread cheese dates eggs flour grapes honey ice jam kale lemon mango nuts olives pears".split()
    sentences = [f"The {w} {k} crate moved {w}wards {k}." for k, w in enumerate(words)]  # nothing shared
    facts = extract([(k, s) for k, s in enumerate(sentences)])
    assert sum(f.text.count("crate") for f in facts) == 4  # sqrt(16)
    assert len(extract([(k, s) for k, s in enumerate(sentences)], max_facts=2)) <= 2
    one = extract([(1, sentences[0])])
    assert [f.text for f in one] == [sentences[0]] and one[0].type == "fact" and one[0].sources == [1]


def test_sentences_of_fewer_than_three_content_words_are_not_facts():
    assert extract([(1, "Thanks, Caroline!"), (2, "ok cool"), (3, "Melanie agreed.")]) == []
    assert extract([(1, "Melanie painted sunrises.")])[0].text == "Melanie painted sunrises."


def test_a_near_repeat_in_another_episode_is_folded_into_one_pattern_with_both_sources():
    a = "Jon opened a dance studio downtown in January after saving for years."
    b = "Jon opened a dance studio downtown in January after saving for years!"
    facts = extract([(1, a), (2, b)])
    assert len(facts) == 1 and facts[0].sources == [1, 2] and facts[0].type == "pattern"
    assert "Jon" in facts[0].entities


def test_facts_say_their_recurring_names_first_and_merge_per_name():
    eps = [
        (1, "Gina opened a clothing store in Boston during March."),
        (2, "Gina hired two designers for the Boston store."),
        (3, "Gina expanded the clothing line with summer dresses."),
        (4, "Gina said the Boston store doubled its revenue."),
    ]
    facts = extract(eps)
    assert facts and facts[0].entities[0] == "Gina"  # said in all four episodes
    assert all(f.type == "pattern" for f in facts if len(set(f.sources)) >= 2)


def test_reflected_facts_carry_their_names_as_tags_not_their_numbers(store):
    _thread(
        store,
        turns=[
            "Caroline met Melanie at the support group on 7 May 2023.",
            "Caroline told Melanie about adoption on 7 May 2023.",
        ],
    )
    made = store.reflect()
    tags = {t for m in made for t in m.tags}
    assert {"caroline", "melanie"} <= tags
    assert not any(t[0].isdigit() for t in tags)


def test_a_fact_over_the_content_bound_is_cut_with_an_ellipsis(tmp_path):
    with MemoryStore(tmp_path / "c.db", settings=Settings(max_content_bytes=200)) as s:
        _thread(s, turns=["Caroline researched adoption agencies in Boston during the spring."] * 2)
        long = "Caroline said " + "adoption agencies matter a lot " * 20
        made = s.reflect(summariser=Canned(long))
        assert len(made) == 1
        assert made[0].content.endswith("…") and 190 <= len(made[0].content.encode()) <= 200
        assert long.startswith(made[0].content[:-1])


def test_the_reflect_job_takes_a_thread_idle_for_exactly_the_bound(tmp_path):
    clock = ManualClock()
    settings = Settings(maintenance={"reflect_idle_minutes": 60})
    with MemoryStore(tmp_path / "i.db", clock=clock, settings=settings) as s:
        _thread(s, thread="t1")
        clock.advance(3600 - 1)
        assert s.run_job("reflect", dry_run=True).counts == {"threads": 0, "active_threads": 1}
        assert s.run_job("reflect").counts["threads"] == 0
        clock.advance(1)
        assert s.run_job("reflect").counts["threads"] == 1


def test_each_agents_episodes_of_a_thread_are_reflected_apart(store):
    _thread(store, agent="a")
    _thread(store, agent="b", turns=["Deborah teaches yoga at the community center.", "Deborah runs a class."])
    made = store.reflect(thread_id="conv-1")
    by_agent = {m.agent_id for m in made}
    assert by_agent == {"a", "b"}
    for m in made:
        assert {s.agent_id for s in store.reflection_sources(m.id)} == {m.agent_id}


def test_archived_episodes_are_not_reflected(store):
    eps = _thread(store)
    for e in eps:
        store.archive(e.id)
    assert store.reflect() == []


def test_sentences_sharing_words_with_another_episode_are_the_ones_kept():
    eps = [
        (1, "garden roses bloom near fences"),
        (2, "window panes rattle in storms"),
        (3, "kettle whistles loudly each morning"),
        (4, "kettle whistles at breakfast time"),
    ]
    facts = extract(eps)  # four sentences: two kept, those sharing words with another episode
    assert [f.text for f in facts] == [eps[2][1], eps[3][1]]
    assert [f.sources for f in facts] == [[3], [4]]


def test_a_merged_fact_names_the_recurring_entities_of_each_of_its_sentences():
    eps = [
        (1, "Gina opened a clothing store in Boston during March."),
        (2, "Gina hired Marco for the Boston store in April."),
        (3, "Gina and Marco painted the store walls in April."),
        (4, "Gina said Marco will design summer dresses."),
    ]
    facts = extract(eps)
    merged = next(f for f in facts if len(f.sources) == 2)
    assert merged.sources == [2, 3] and merged.type == "pattern"
    # Boston recurs (episodes 1 and 2) and is named by one of the two sentences: it stays, after the names
    # said more often
    assert merged.entities == ["Gina", "Marco", "April", "Boston"]
