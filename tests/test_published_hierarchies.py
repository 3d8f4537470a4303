"""Signing method 29: the exception hierarchies of Python's standard library and of the JDK in the failure lexicon
(scripts/gen_failure_lexicon.py from scripts/data/, docs/signatures.md "Method 29")."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore, error_signatures as es, failure_lexicon as lex
from harness_memory.failure_excerpt import extract
from harness_memory.failure_lexicon_tables import JAVA_EXCEPTIONS, PY_EXCEPTIONS, PY_STDLIB_EXCEPTIONS, RUBY_EXCEPTIONS

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gen_failure_lexicon", ROOT / "scripts" / "gen_failure_lexicon.py")
assert _spec is not None and _spec.loader is not None
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def category(text: str) -> str:
    return es.categorize(extract(text))


def test_the_tables_hold_only_known_categories_and_names_without_dots():
    for table in (PY_STDLIB_EXCEPTIONS, JAVA_EXCEPTIONS):
        assert table  # the data files were read
        for name, cat in table.items():
            assert cat in es.CATEGORIES and cat != "unknown"
            assert "." not in name and "$" not in name


def test_a_builtin_name_is_never_answered_by_the_standard_librarys_table():
    # multiprocessing.TimeoutError and socket.timeout are the built-in's business (PY_EXCEPTIONS)
    assert not set(PY_STDLIB_EXCEPTIONS) & set(PY_EXCEPTIONS)


def test_a_subclass_takes_its_nearest_rooted_ancestors_category():
    listing = json.loads((ROOT / "scripts" / "data" / "python_stdlib_exceptions.json").read_text(encoding="utf-8"))
    # RemoteDisconnected is a ConnectionResetError (a built-in root) before it is a BadStatusLine
    assert listing["http.client.RemoteDisconnected"][0] == "ConnectionResetError"
    assert PY_STDLIB_EXCEPTIONS["RemoteDisconnected"] == "network"
    # an HTTPError is a URLError, but its status decides: the root None stops the walk
    assert "HTTPError" not in PY_STDLIB_EXCEPTIONS and PY_STDLIB_EXCEPTIONS["URLError"] == "network"
    # the JDK: a LinkageError's initializer failure is not a missing class; the binary incompatibilities are
    assert "ExceptionInInitializerError" not in JAVA_EXCEPTIONS
    assert JAVA_EXCEPTIONS["NoSuchMethodError"] == JAVA_EXCEPTIONS["AbstractMethodError"] == "import_error"
    assert JAVA_EXCEPTIONS["BindException"] == JAVA_EXCEPTIONS["NoRouteToHostException"] == "network"  # sockets
    assert JAVA_EXCEPTIONS["HttpConnectTimeoutException"] == "timeout"  # HttpTimeoutException's, not IOException's


def test_a_name_two_classes_give_different_categories_is_left_out():
    got = gen._by_simple_name(
        {"a.Refused": "network", "b.Refused": "permission", "c.Gone": "not_found", "d.Gone": "not_found", "e.X": None},
        {"Taken": "timeout"},
    )
    assert got == {"Gone": "not_found"}
    assert gen._by_simple_name({"a.Taken": "network"}, {"Taken": "timeout"}) == {}


def test_nearest_stops_at_a_root_that_says_none():
    roots = {"m.Status": None, "m.Fetch": "network"}
    assert gen._nearest(["m.Sub", "m.Status", "m.Fetch"], roots, {}) is None
    assert gen._nearest(["m.Sub", "m.Fetch", "m.Status"], roots, {}) == "network"
    assert gen._nearest(["m.Sub", "ConnectionError"], {}, {"ConnectionError": "network"}) == "network"
    assert gen._nearest(["m.Sub"], roots, {}) is None


@pytest.mark.parametrize(
    ("text", "cat"),
    [
        ("http.client.RemoteDisconnected: Remote end closed connection without response", "network"),
        ("http.client.IncompleteRead: IncompleteRead(512 bytes read, 1024 more expected)", "network"),
        ("http.client.BadStatusLine: ''", "network"),
        ("smtplib.SMTPAuthenticationError: (535, b'5.7.8 Username and Password not accepted.')", "permission"),
        ("multiprocessing.context.AuthenticationError: digest received was wrong", "permission"),
        ("configparser.NoSectionError: No section: 'tool'", "not_found"),
        ("configparser.NoOptionError: No option 'x' in section: 'tool'", "not_found"),
        (
            'Exception in thread "main" java.lang.IllegalAccessError: class A tried to access private method',
            "import_error",
        ),
        (
            'Exception in thread "main" java.lang.AbstractMethodError: Receiver class X does not define m',
            "import_error",
        ),
        ('Exception in thread "main" java.nio.channels.InterruptedByTimeoutException', "timeout"),
    ],
)
def test_a_published_class_names_its_category(text, cat):
    assert category(text) == cat


def test_a_python_traceback_ending_in_a_class_without_the_usual_suffix_is_read_by_its_hierarchy(tmp_path):
    log = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/fetch.py", line 12, in <module>\n'
        "    body = get(url)\n"
        '  File "/usr/lib/python3.11/http/client.py", line 287, in _read_status\n'
        '    raise RemoteDisconnected("Remote end closed connection without"\n'
        "http.client.RemoteDisconnected: Remote end closed connection without response\n"
    )
    with MemoryStore(tmp_path / "m.db") as s:
        signed = s.error_signature(log)
    assert signed.category == "network"
    assert "RemoteDisconnected" in signed.excerpt


def test_the_exception_the_java_initializer_threw_is_not_a_missing_class():
    assert category('Exception in thread "main" java.lang.ExceptionInInitializerError') != "import_error"


@settings(max_examples=200, deadline=None)
@given(
    # (CamelCase names: a lower-case one, ``gaierror``, is read where it is the exception, not in running text)
    name=st.sampled_from(
        sorted(n for n in {*PY_STDLIB_EXCEPTIONS, *JAVA_EXCEPTIONS} - {"AssertionError"} if n[0].isupper())
    ),
    tool=st.sampled_from(["worker-3", "deploy", "[sync]", "ci"]),
)
def test_a_published_class_in_running_text_is_read_only_where_the_words_say_nothing(name, tool):
    table = PY_STDLIB_EXCEPTIONS if name in PY_STDLIB_EXCEPTIONS else JAVA_EXCEPTIONS
    # the name alone after a tool's prefix: the table answers
    assert lex.text_category(f"{tool}: gave up after {name}") == table[name]
    # the line's own words first: a quota's words decide whatever class the line names
    assert es._by_text(f"{tool}: quota exceeded after {name} on retry") == "rate_limit"


def test_the_data_listings_are_sorted_and_complete_enough():
    java = (ROOT / "scripts" / "data" / "java_throwables.txt").read_text(encoding="utf-8").splitlines()
    assert java == sorted(java) and all(len(line.split(" ")) == 2 for line in java)
    assert any(line.startswith("java.net.ConnectException ") for line in java)
    listing = json.loads((ROOT / "scripts" / "data" / "python_stdlib_exceptions.json").read_text(encoding="utf-8"))
    assert list(listing) == sorted(listing) and "socket.gaierror" in listing and "ssl.SSLError" in listing


@pytest.mark.parametrize("name", sorted(RUBY_EXCEPTIONS))
def test_a_ruby_class_closing_its_uncaught_line_gives_its_category_qualified_or_not(name):
    # Ruby's top level prints ``file:line:in 'm': message (Class)``; a class under a module is published whole
    # (``Encoding::CompatibilityError``), its last part alone names nothing (heldout15's Ruby log, after its run)
    assert category(f"lib/digest_mail.rb:5:in `render': boom ({name})") == RUBY_EXCEPTIONS[name]
