"""The learned category fallback (harness_memory/category_model.py): its weights load lazily from plain JSON,
bad model files get a typed error, and signing uses it exactly where the rules answer ``unknown``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness_memory import MemoryStore, category_model
from harness_memory.category_model import CategoryModel, block_text, features
from harness_memory.error_signatures import CATEGORIES, categorize, categorize_learned
from harness_memory.errors import ConfigurationError
from harness_memory.failure_excerpt import extract


def tiny(word: str, category: str) -> CategoryModel:
    """A model that knows one word, which names ``category`` (the other category is ``assertion``)."""
    classes = tuple(sorted({category, "assertion"}))
    feats = [f"w:{word}", "w:the"]
    coef = [[6.0 if c == category else -6.0, 0.0] for c in classes]
    return CategoryModel(classes, {f: i for i, f in enumerate(feats)}, [1.0, 1.0], coef, [0.0] * len(classes))


@pytest.fixture
def shipped_model_replaced(monkeypatch):
    def use(model: CategoryModel) -> None:
        monkeypatch.setitem(category_model._loaded, category_model.MODEL_PATH, model)

    return use


def test_the_shipped_weights_load_and_name_only_known_categories():
    model = category_model.load()
    assert set(model.classes) <= set(CATEGORIES) and len(model.classes) >= 10
    assert len(model.vocabulary) == len(model.idf) > 1000
    assert all(len(row) == len(model.idf) for row in model.coef)
    assert category_model.load() is model  # read once per process
    probs = model.probabilities("ConnectionRefusedError: [Errno 111] Connection refused")
    assert abs(sum(probs.values()) - 1.0) < 1e-9 and max(probs, key=probs.__getitem__) == "network"


@pytest.mark.parametrize(
    "line",
    [
        "ERROR: Job failed: exit code 1",
        "make: *** [Makefile:12: all] Error 2",
        "BUILD FAILED in 3s",
        "Process finished with error",
        "error: build step failed",
        "Job failed: exit code 2",
        "Exception in thread main",
        "Error in stage deploy",
    ],
)
def test_the_shipped_weights_leave_a_generic_failure_line_unknown(line):
    # a trailer or summary says that something failed, not what: the model learned such lines as unknown (the
    # corpus' lines away from the marked failure), so it does not guess a category from failure words alone
    assert category_model.predict(line) == "unknown"
    if categorize(extract(line)) == "unknown":  # where the rules have nothing to say either, signing says unknown
        with MemoryStore(":memory:") as store:
            assert store.error_signature(line).category == "unknown"


def test_importing_the_library_reads_no_weights():
    code = "import harness_memory, harness_memory.category_model as m; print(len(m._loaded))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


def test_a_model_round_trips_through_plain_json(tmp_path):
    model = tiny("zorblax", "network")
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model.to_json()), encoding="utf-8")
    again = category_model.load(path)
    assert again.predict("the zorblax failed") == model.predict("the zorblax failed")
    assert again.predict("the zorblax failed")[0] == "network"


def test_a_gzip_compressed_model_loads_as_the_shipped_one_is(tmp_path):
    import gzip

    assert category_model.MODEL_PATH.suffix == ".gz"
    model = tiny("zorblax", "network")
    path = tmp_path / "m.json.gz"
    path.write_bytes(gzip.compress(json.dumps(model.to_json()).encode("utf-8")))
    assert category_model.load(path).predict("the zorblax failed") == model.predict("the zorblax failed")
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(path.read_bytes()[:20])  # a truncated download
    with pytest.raises(ConfigurationError):
        category_model.load(cut)


@pytest.mark.parametrize(
    "doc",
    [
        {"format": 99},
        {"format": 1, "classes": ["a"], "features": ["w:x"], "idf": [1.0], "coef": [[1.0, 2.0]], "intercept": [0]},
        {"format": 1, "classes": ["a"], "features": ["w:x"], "idf": [], "coef": [[1.0]], "intercept": [0]},
        {"format": 1, "classes": ["a"]},
        [1, 2],
    ],
    ids=["format", "coef-shape", "idf-length", "missing-keys", "not-an-object"],
)
def test_a_file_that_is_not_a_model_is_a_configuration_error(tmp_path, doc):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ConfigurationError):
        category_model.load(path)


def test_an_unreadable_model_file_is_a_configuration_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigurationError):
        category_model.load(path)
    with pytest.raises(ConfigurationError):
        category_model.load(tmp_path / "missing.json")


def test_features_are_words_pairs_and_character_ngrams_with_digits_masked():
    got = features("ConnectionRefused at port 5432")
    assert got["w:connection"] == 1 and got["w:refused"] == 1 and got["b:connection refused"] == 1
    assert "c: co" in got and "c:sed " in got
    assert features("port 5432") == features("port 8080")  # digits are masked
    assert features("") == {}


def test_a_text_with_no_known_feature_stays_unknown():
    model = tiny("zorblax", "network")
    assert model.predict("nothing here matches") == ("unknown", 0.0)
    assert category_model.predict("nothing here matches", model) == "unknown"


def test_below_the_minimum_probability_the_answer_stays_unknown(monkeypatch):
    model = tiny("zorblax", "network")
    assert category_model.predict("zorblax error", model) == "network"
    monkeypatch.setattr(category_model, "MIN_PROBABILITY", 1.01)
    assert category_model.predict("zorblax error", model) == "unknown"


def test_signing_takes_the_model_category_where_the_rules_say_unknown(tmp_path, shipped_model_replaced):
    text = "the zorblax fault during the nightly run"
    assert categorize(extract(text)) == "unknown"  # the rules have nothing to say
    shipped_model_replaced(tiny("zorblax", "network"))
    assert categorize_learned(extract(text)) == "network"
    with MemoryStore(tmp_path / "m.db") as store:
        assert store.error_signature(text).category == "network"


def test_the_model_never_overrides_a_category_the_rules_gave(tmp_path, shipped_model_replaced):
    text = "AssertionError: zorblax expected 3, got 2"
    assert categorize(extract(text)) == "assertion"
    shipped_model_replaced(tiny("zorblax", "network"))
    assert categorize_learned(extract(text)) == "assertion"
    with MemoryStore(tmp_path / "m.db") as store:
        assert store.error_signature(text).category == "assertion"


def test_disabled_the_fallback_leaves_unknown(tmp_path, shipped_model_replaced, monkeypatch):
    text = "the zorblax fault during the nightly run"
    shipped_model_replaced(tiny("zorblax", "network"))
    monkeypatch.setattr(category_model, "ENABLED", False)
    assert categorize_learned(extract(text)) == "unknown"
    with MemoryStore(tmp_path / "m.db") as store:
        assert store.error_signature(text).category == "unknown"


def test_the_model_reads_the_block_and_its_exception():
    text = block_text("boom", "boom\n  at x", "detail line", "ZorblaxError")
    assert text.split("\n") == ["ZorblaxError", "boom", "boom", "  at x", "detail line"]
    assert block_text("boom", "boom") == "\nboom"
    assert len(block_text("x" * 10_000)) == category_model.MAX_CHARS == 4000  # the documented bound


def test_a_text_without_a_failure_word_is_not_asked_about(shipped_model_replaced):
    shipped_model_replaced(tiny("zorblax", "network"))
    assert categorize_learned(extract("the zorblax went sideways during the nightly run")) == "unknown"
    assert categorize_learned(extract("the zorblax went sideways: error")) == "network"


@pytest.mark.parametrize(
    "text",
    [
        "ERROR: Job failed: exit code 1",
        "BUILD FAILED in 1m 20s",
        "##[error]Process completed with exit code 2.",
        "Finished: FAILURE\nERROR: script returned exit code 1",  # every line a runner's
        "user command error: exit status 1",
        "FAILED",
        "Error in the build step",  # "error" the one failure word
        "a problem occurred in the pipeline",
    ],
)
def test_a_runner_s_exit_lines_are_boilerplate(text):
    assert category_model.is_boilerplate(text) is True


@pytest.mark.parametrize(
    "text",
    [
        "Tests failed",  # says what failed
        "ERROR: Job failed: exit code 1\nConnectionRefusedError: [Errno 111]",  # one line of evidence is enough
        "the build ran in 3s",  # runner's words, but nothing failed
        "",
        "failed (NoMethodError)",
    ],
)
def test_a_line_that_says_what_failed_or_nothing_failed_is_not_boilerplate(text):
    assert category_model.is_boilerplate(text) is False


def test_boilerplate_is_read_only_within_the_model_s_bound():
    # past MAX_CHARS nothing is read: a long run of runner lines with evidence after the bound is still boilerplate
    filler = "Job failed: exit code 1\n" * (category_model.MAX_CHARS // 24 + 1)
    assert category_model.is_boilerplate(filler + "ConnectionRefusedError")


def test_the_model_is_not_asked_about_a_runner_s_exit_line(shipped_model_replaced):
    shipped_model_replaced(tiny("completed", "timeout"))  # a model that would say timeout for it
    assert category_model.predict("Error: Process completed with exit code 1.") == "unknown"
    assert category_model.predict("Error: Process completed the zorblax") == "timeout"


def test_a_guessed_category_does_not_regroup_the_error(tmp_path, shipped_model_replaced, monkeypatch):
    # an environment category drops the key frame; a guessed one must not: the same id with and without the model
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/app/jobs/sync.py", line 12, in run\n'
        "    step()\n"
        "ZorblaxFault: the zorblax went sideways\n"
    )
    shipped_model_replaced(tiny("zorblax", "network"))
    with MemoryStore(tmp_path / "a.db") as store:
        guessed = store.error_signature(trace)
    monkeypatch.setattr(category_model, "ENABLED", False)
    with MemoryStore(tmp_path / "b.db") as store:
        ruled = store.error_signature(trace)
    assert (guessed.category, ruled.category) == ("network", "unknown")
    assert guessed.frame == ruled.frame is not None and guessed.id == ruled.id


def test_answers_and_word_columns_are_cached_within_a_bound(monkeypatch):
    model = tiny("zorblax", "network")
    monkeypatch.setattr(category_model, "WORD_CACHE", 3)
    first = model.predict("zorblax error at port 5432")
    assert len(model._word_columns) <= 3  # four words, three places: emptied once on the way
    assert model.predict("zorblax error at port 8080") == first  # digits masked: the same words, the same answer
    for i in range(10):
        model.predict(f"zorblax error number {'x' * (i + 2)}")
        assert len(model._answers) <= 3 and len(model._word_columns) <= 3
    assert model.predict("zorblax error at port 5432") == first  # forgotten, then computed again alike


def test_colour_codes_and_hex_numbers_are_not_words():
    assert features("\x1b[31mConnection refused\x1b[0m") == features("Connection refused")
    assert features("\x1b[1mrefused\x1b[0m") == features("refused")  # not ``mrefused``
    assert features("segfault at 0xdeadbeef") == features("segfault at 0x1234") == features("segfault at")
    assert set(features("ab")) == {"w:ab", "c: ab", "c:ab ", "c: ab "}


def test_an_answer_at_or_above_the_minimum_probability_is_kept():
    # three categories, one word worth 0.5 for the first: its probability is e^0.5 / (e^0.5 + 2) = 0.45
    model = CategoryModel(
        ("network", "timeout", "type_error"), {"w:zorblax": 0}, [1.0], [[0.5], [0.0], [0.0]], [0, 0, 0]
    )
    cat, prob = model.predict("zorblax error")
    assert cat == "network" and 0.44 < prob < 0.46
    assert category_model.predict("zorblax error", model) == "network"  # 0.45 >= MIN_PROBABILITY (0.3)


def test_caches_are_not_part_of_a_model_s_identity():
    a, b = tiny("zorblax", "network"), tiny("zorblax", "network")
    a.predict("zorblax error")
    assert a == b and "_answers" not in repr(a) and "_word_columns" not in repr(a) and "_matrix" not in repr(a)


def test_a_bad_model_file_says_what_is_wrong(tmp_path):
    cases = [
        ({"format": 99}, "category model format 99, expected 1"),
        (
            {"format": 1, "classes": ["a"], "features": ["w:x"], "idf": [1.0], "coef": [[1, 2]], "intercept": [0]},
            "coef",
        ),
        ({"format": 1, "classes": ["a"], "features": ["w:x"], "idf": [], "coef": [[1.0]], "intercept": [0]}, "idf"),
    ]
    for doc, words in cases:
        with pytest.raises(ConfigurationError, match="^category model") as err:
            CategoryModel.from_json(doc)
        assert words in str(err.value) and "not a model document" not in str(err.value)
    assert block_text("boom") == "\nboom"


def test_the_vector_and_the_probabilities_are_sublinear_tf_idf_and_a_softmax():
    import math

    vocab = {"w:aa": 0, "w:bb": 1, "b:aa bb": 2}
    model = CategoryModel(
        ("network", "timeout"), vocab, [1.0, 2.0, 0.5], [[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]], [0.1, -0.2]
    )
    raw = [(1 + math.log(2)) * 1.0, 1.0 * 2.0, 1.0 * 0.5]  # aa twice, bb once, the pair "aa bb" once ("bb aa" is none)
    norm = math.sqrt(sum(v * v for v in raw))
    want = [v / norm for v in raw]
    got = model.vector("aa bb aa")
    assert set(got) == {0, 1, 2} and all(abs(got[i] - want[i]) < 1e-12 for i in range(3))
    s0, s1 = 0.1 + want[0] + 0.5 * want[2], -0.2 + want[1]
    p0 = math.exp(s0) / (math.exp(s0) + math.exp(s1))
    probs = model.probabilities("aa bb aa")
    assert abs(probs["network"] - p0) < 1e-12 and abs(probs["timeout"] - (1 - p0)) < 1e-12
    cat, prob = model.predict("aa bb aa")
    assert cat == "network" and abs(prob - p0) < 1e-12 and p0 > 0.5


def test_short_messages_and_words_are_remembered_long_messages_are_not():
    model = tiny("zorblax", "network")
    model.predict("zorblax error here")
    assert len(model._answers) == 1 and {"zorblax", "error", "here"} <= set(model._word_columns)
    model.predict("zorblax error there")
    assert len(model._answers) == 2
    model.predict(" ".join(["zorblax"] * 64))  # 64 words: remembered
    assert len(model._answers) == 3
    model.predict(" ".join(["zorblax"] * 65))  # more than 64 words: computed, not remembered
    assert len(model._answers) == 3
    key = ("zorblax", "error", "here")
    model._answers[key] = ("timeout", 0.9)  # a remembered answer is the answer
    assert model.predict("zorblax error here") == ("timeout", 0.9)


def test_a_model_file_keeps_five_decimals():
    model = CategoryModel(("network",), {"w:aa": 0}, [1.2345678], [[-0.1234567]], [0.9876543])
    doc = model.to_json()
    assert (doc["idf"], doc["coef"], doc["intercept"]) == ([1.23457], [[-0.12346]], [0.98765])


def test_a_loaded_model_cannot_be_changed_in_place():
    # one model is shared by every thread of a process (``load`` caches it): its weights are read-only
    model = tiny("zorblax", "network")
    with pytest.raises(AttributeError):
        model.classes = ("network",)  # type: ignore[misc]
