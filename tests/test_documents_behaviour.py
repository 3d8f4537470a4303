"""Documents as documented in harness_memory/documents.py: which text is markdown, code or plain, the
chunk bound at its edge and one past it (paragraphs, then lines, then hard cuts; the heading path
counts), greedy packing, the title rules, and reading a source (a path or a one-line string naming a
file, folders and non-UTF-8 refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.documents import chunk_text, read_source


@pytest.mark.parametrize(
    ("source", "text", "kind"),
    [
        ("notes.md", "plain words", "markdown"),
        ("guide.RST", "plain words", "markdown"),
        ("tool.py", "plain words", "code"),
        ("query.sql", "plain words", "code"),
        ("notes.txt", "# One\n\ntext\n\n## Two\n\nmore", "markdown"),  # two headings: markdown
        (None, "# One\n\ntext\n\n## Two\n\nmore", "markdown"),
        ("notes.txt", "# One\n\njust one heading", "text"),
        ("data.csv", "# One\n\n## Two", "text"),  # a suffix that is neither: text whatever it holds
        (None, "no headings at all", "text"),
    ],
)
def test_the_kind_comes_from_the_suffix_or_from_two_headings(source, text, kind):
    assert chunk_text(text, source=source)[0] == kind


def test_text_of_exactly_the_limit_is_one_chunk_and_one_more_character_splits_it():
    assert [c.text for c in chunk_text("a" * 300, limit=300)[1]] == ["a" * 300]
    assert [len(c.text) for c in chunk_text("a" * 301, limit=300)[1]] == [300, 1]


def test_paragraphs_are_packed_greedily_within_the_limit():
    paras = ["p" * 90, "q" * 90, "r" * 90, "s" * 90]
    _, chunks = chunk_text("\n\n".join(paras), limit=200)
    assert [c.text for c in chunks] == ["p" * 90 + "\n\n" + "q" * 90, "r" * 90 + "\n\n" + "s" * 90]
    _, exact = chunk_text("\n\n".join(["p" * 99, "q" * 99]), limit=200)  # 99 + 2 + 99 = 200: one chunk
    assert len(exact) == 1
    _, over = chunk_text("\n\n".join(["p" * 99, "q" * 100]), limit=200)
    assert [len(c.text) for c in over] == [99, 100]


def test_a_long_paragraph_splits_on_lines_before_it_is_cut():
    lines = [f"line {k:02d} " + "w" * 40 for k in range(10)]  # 48 characters each
    _, chunks = chunk_text("\n".join(lines), limit=100)
    assert [c.text for c in chunks] == ["\n".join(lines[k : k + 2]) for k in range(0, 10, 2)]


def test_chunks_are_numbered_in_order_and_blank_ones_dropped():
    _, chunks = chunk_text("first para\n\n   \n\nsecond para", limit=100)
    assert [(c.position, c.text) for c in chunks] == [(0, "first para\n\nsecond para")]


def test_a_markdown_chunk_starts_with_its_heading_path_which_counts_towards_the_limit():
    text = "# Guide\n\n## Install\n\n" + "\n\n".join("x" * 80 for _ in range(6))
    _, chunks = chunk_text(text, source="g.md", limit=300)
    assert all(c.heading == "Guide > Install" for c in chunks)
    assert all(c.text.startswith("Guide > Install\n\n") and len(c.text) <= 300 for c in chunks)
    assert sum(c.text.count("x" * 80) for c in chunks) == 6


def test_a_deeper_heading_nests_and_a_sibling_replaces_it():
    text = "# A\n\nintro\n\n## B\n\nbee\n\n### C\n\nsea\n\n## D\n\ndee"
    _, chunks = chunk_text(text, source="t.md")
    assert [c.heading for c in chunks] == ["A", "A > B", "A > B > C", "A > D"]


def test_code_keeps_comments_and_decorators_with_their_definition():
    code = "import os\n\n\n# the helper\n@cache\ndef helper():\n    return 1\n\n\nclass Thing:\n    pass\n"
    _, chunks = chunk_text(code, source="m.py", limit=50)
    assert [c.text for c in chunks] == [
        "import os",
        "# the helper\n@cache\ndef helper():\n    return 1",
        "class Thing:\n    pass",
    ]


@pytest.mark.parametrize(
    ("text", "source", "title"),
    [
        ("intro\n\n# The Title #\n\nbody", None, "The Title"),
        ("no heading here\nsecond line", "/docs/readme.txt", "readme.txt"),
        ("\n\n  first words  \nsecond", None, "first words"),
        ("y" * 100, None, "y" * 80),
    ],
)
def test_the_title_is_the_first_heading_or_the_file_name_or_the_first_line(tmp_path, text, source, title):
    with MemoryStore(tmp_path / "d.db") as s:
        if source is not None:
            path = tmp_path / Path(source).name
            path.write_text(text)
            doc = s.add_document(path).document
        else:
            doc = s.add_document(text).document
        assert doc.title == title


def test_a_heading_after_fifty_lines_is_not_the_title(tmp_path):
    text = "\n".join(f"line {k}" for k in range(50)) + "\n# Late heading\n\nbody"
    with MemoryStore(tmp_path / "d.db") as s:
        assert s.add_document(text).document.title == "line 0"


def test_the_chunk_limit_is_the_setting_or_a_quarter_of_the_content_bound(tmp_path):
    text = "\n\n".join("z" * 150 for _ in range(10))
    with MemoryStore(tmp_path / "a.db", settings=Settings(document_chunk_chars=400)) as s:
        rep = s.add_document(text)
        assert rep.document.chunks == 5  # two 150-character paragraphs per 400-character chunk
    with MemoryStore(tmp_path / "b.db", settings=Settings(document_chunk_chars=4000, max_content_bytes=1300)) as s:
        assert s.add_document(text).document.chunks == 5  # 1300 // 4 = 325: two per chunk


def test_a_one_line_string_naming_a_file_is_read_and_other_text_is_text(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("file contents")
    assert read_source(str(f)) == ("file contents", str(f.resolve()))
    assert read_source(f) == ("file contents", str(f.resolve()))
    assert read_source(str(tmp_path / "missing.txt")) == (str(tmp_path / "missing.txt"), None)
    assert read_source(f"{f}\nsecond line") == (f"{f}\nsecond line", None)


@pytest.mark.parametrize("bad", [3, None, b"bytes"])
def test_a_source_that_is_neither_text_nor_a_path_is_refused(bad):
    with pytest.raises(InvalidInputError):
        read_source(bad)


def test_a_folder_or_non_utf8_file_is_refused(tmp_path):
    with pytest.raises(InvalidInputError, match="folder"):
        read_source(tmp_path)
    f = tmp_path / "bin.txt"
    f.write_bytes(b"ok \xff\xfe")
    with pytest.raises(InvalidInputError, match="not UTF-8"):
        read_source(f)


@pytest.mark.parametrize(
    "suffix",
    [".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt", ".c", ".h", ".cc", ".cpp", ".hpp"]
    + [".cs", ".rb", ".php", ".swift", ".scala", ".sh", ".bash", ".lua", ".r", ".sql"],
)
def test_every_documented_code_suffix_is_code(suffix):
    assert chunk_text("x = 1", source=f"file{suffix}")[0] == "code"


def test_a_chunk_built_directly_is_at_position_zero():
    from harness_memory.documents import Chunk

    assert Chunk("text", None).position == 0


def test_a_comment_on_the_first_line_stays_with_the_definition_below_it():
    _, chunks = chunk_text("# helper\ndef f():\n    pass\n", source="m.py", limit=26)
    assert [c.text for c in chunks] == ["# helper\ndef f():\n    pass"]


def test_each_chunk_names_its_document_title_source_position_and_heading(tmp_path):
    text = "# Guide\n\nfirst part about proxies\n\n## Later\n\nsecond part about caches"
    with MemoryStore(tmp_path / "m.db", settings=Settings(document_chunk_chars=200)) as s:
        doc = s.add_document(text, source="guide.md", title="The guide").document
        metas = sorted((m.metadata for m in s.get_by_type("document", agent_id="x")), key=lambda d: d["position"])
        assert [(d["document"], d["title"], d["source"], d["position"], d["heading"]) for d in metas] == [
            (doc.uid, "The guide", "guide.md", 0, "Guide"),
            (doc.uid, "The guide", "guide.md", 1, "Guide > Later"),
        ]
        # a new first section moves the unchanged chunks: their position follows
        s.add_document("# Intro\n\nnew opening words\n\n" + text, source="guide.md", title="The guide")
        metas = sorted((m.metadata for m in s.get_by_type("document", agent_id="x")), key=lambda d: d["position"])
        assert [(d["position"], d["heading"]) for d in metas] == [(0, "Intro"), (1, "Guide"), (2, "Guide > Later")]
