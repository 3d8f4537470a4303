"""The failure lexicon (harness_memory/failure_lexicon.py, signing method 26) under mutation testing and review:
tests for what its own tests let through, and its cost on hostile input.

A finding of the review (see ``test_a_long_name_like_run_costs_linear_time``): the name pattern was searched with
a lookahead and tried at every position of a long run of name characters, each failed try scanning to the run's
end, so a line of 8,000 such characters (the head ``_by_text`` reads) cost about a second of CPU to sign. The library
now tries each maximal word run once, its shape checked by ``fullmatch``; ``_named_by_search`` below is the earlier
reading, kept as the oracle: a hypothesis property shows the two give the same answers, so the fix is a pure speed
change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from conftest import cpu_seconds
from harness_memory import MemoryStore, error_signatures as es, failure_lexicon as lex
from harness_memory.failure_excerpt import extract

# hostile lines of the head's length (8,000 characters): runs that look like a name until their last character
HOSTILE = {
    "snake": "A" + "_A" * 3999 + "-",
    "snake_key": "A" + "_B" * 3999 + "x",
    "camel": "Ab" * 4000 + "/",
    "upper_snake": "AB_" * 2666,
}

# the reading before the fix (ed93d6f): the name pattern searched with its lookahead, a match starting inside a
# longer word refused by hand (quadratic on a long name-like run; the oracle for the linear one)
_NAME_TOKEN_BEFORE = re.compile(r"[A-Z](?:[a-z0-9]*(?:[A-Z][a-z0-9]*)+|[A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w/\\-]|=(?!=))")


def _named_by_search(text: str) -> str | None:
    """``named_category`` as it read before the fix."""
    if lex._NAME_START.search(text) is not None:
        for m in _NAME_TOKEN_BEFORE.finditer(text):
            i = m.start()
            if i and (text[i - 1].isalnum() or text[i - 1] in lex._NOT_BEFORE_NAME):
                continue
            token = m.group()
            if lex._states_outcome(token):
                cat = lex.name_category(token)
                if cat is not None:
                    return cat
    return lex.http_category(text)


_cpu = cpu_seconds


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_a_long_name_like_run_costs_linear_time(shape, tmp_path):
    line = HOSTILE[shape]
    lex.name_category.cache_clear()
    lex._states_outcome.cache_clear()
    # a linear reading of 8,000 characters takes milliseconds; 0.2 s of CPU leaves room for a loaded machine
    assert _cpu(lex.named_category, line) < 0.2
    with MemoryStore(tmp_path / "m.db") as s:
        s.error_signature("Error: warm up 0x1")  # (the first signing loads the category model: ~0.1 s)
        assert _cpu(s.error_signature, "deploy: " + line) < 0.2


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_the_linear_reading_answers_the_hostile_lines_as_the_earlier_one(shape):
    line = HOSTILE[shape]
    assert lex.named_category(line) == _named_by_search(line)


_ALPHABET = "AaBbEeRrOoXxZz019_/\\$-=: .()é日"
_PIECES = st.sampled_from(
    [
        "Error",
        "Exception",
        "Timeout",
        "AccessDenied",
        "NoSuchKey",
        "ER_ACCESS_DENIED_ERROR",
        "Test",
        "Connection",
        "Refused",
        "HTTP 503",
        "status code: 404",
        " 429 Too Many Requests",
        "TooManyRequests",
        "DeadlineExceeded",
        "EACCES",
        "==",
        "=",
        "/",
        "-",
        "$",
        "\\",
        "_",
        " ",
        "x",
        "é",
    ]
)


@settings(max_examples=600, deadline=None)
@given(st.one_of(st.text(_ALPHABET, max_size=60), st.lists(_PIECES, max_size=12).map("".join)))
def test_the_linear_reading_gives_the_earlier_readings_answers(text):
    assert lex.named_category(text) == _named_by_search(text)


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=300), st.integers(1, 40))
def test_every_reader_takes_any_unicode_and_answers_a_category_or_none(text, repeat):
    # non-ASCII, NUL, control characters, long repeats: no exception, an answer among the categories
    cats = set(es.CATEGORIES)
    line = (text * repeat)[:8000]
    for reader in (lex.text_category, lex.named_category, lex.trailing_reason, lex.os_reason, lex.http_category):
        got = reader(line)
        assert got is None or got in cats
    assert isinstance(es.categorize(extract(line or "x")), str)


def test_categories_are_the_stores_on_a_real_file(tmp_path: Path):
    # the lexicon's answers reach the signature a store keeps (SQLite file): one line per kind of evidence
    lines = {
        "deploy: open /srv/app/data.bin: EACCES": "permission",
        "zorp: could not render page (ECONNREFUSED)": "network",
        "error: unable to create compilation: AccessDenied": "permission",
        "upload failed: HTTP/1.1 429 Too Many Requests": "rate_limit",
        "sync: ProvisionedThroughputExceededException raised by table orders": "rate_limit",
    }
    with MemoryStore(tmp_path / "m.db") as s:
        assert {t: s.error_signature(t).category for t in lines} == lines


# -- each reader's rules, one case per rule (the cases a mutation of a table entry, a pattern or a bound changes) --

NAMES = {
    # the more specific meaning first: a host not found is network, a class not found a missing dependency
    "HostNotFoundException": "network",
    "UnknownHostException": "network",
    "ClassNotFoundException": "import_error",
    "UnsatisfiedLinkError": "import_error",
    "NoClassDefFoundError": "import_error",
    "ModNotFound": "import_error",
    "ConnectionTimeoutException": "timeout",
    "NumberFormatException": "type_error",
    "ParseIntError": "type_error",
    "ScannerError": "compile_error",
    "LexerFault": "compile_error",
    "StackOverflowError": "out_of_memory",
    "HeapExhausted": "out_of_memory",
    "DiskFullError": "out_of_memory",
    "TooManyOpenFilesError": "out_of_memory",
    "QuotaExceededError": "rate_limit",
    "ThrottlingException": "rate_limit",
    "ProvisionedThroughputExceeded": "rate_limit",
    "AccessDeniedException": "permission",
    "ER_ACCESS_DENIED_ERROR": "permission",
    "CertificateVerifyFailure": "network",
    "TypeCastError": "type_error",
    "NullPointerException": "type_error",
    "AssertionFailedError": "assertion",
    "WidgetFault": None,
    # published names and codes
    "TooManyRequests": "rate_limit",
    "ServiceUnavailable": "network",
    "OutOfMemory": "out_of_memory",
    "AddrInUse": "network",
    "ReadOnlyFilesystem": "permission",
    "DeadlineExceeded": "timeout",
    "RESOURCE_EXHAUSTED": "rate_limit",
    "ErrNotExist": "not_found",
    "BindException": "network",
    "FormatException": "type_error",
    "TimedOut": "timeout",
    "WSAETIMEDOUT": "timeout",
    "ERROR_ACCESS_DENIED": "permission",
    "EADDRINUSE": "network",
    # a qualified name's last part, whatever the separator
    "java.net.SocketTimeoutException": "timeout",
    "Foo::BarNotFound": "not_found",
    "Outer$NoSuchThingError": "not_found",
    "Ns\\DnsLookupFailure": "network",
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_name_category_reads_each_kind_of_name(name):
    assert lex.name_category(name) == NAMES[name]


HTTP = {
    "HTTP/1.1 503": "network",
    "http/2 403": "permission",
    "HTTP 504": "timeout",
    "HTTP 408 Request Timeout": "timeout",
    "status code: 404": "not_found",
    "StatusCode=410": "not_found",
    "status_code 407": "permission",
    "response code 401": "permission",
    "error 429": "rate_limit",
    "got 404 Not Found": "not_found",
    "upstream said 502 Bad Gateway": "network",
    "503": None,  # a bare number is no status
    "v1.404": None,
    "x-404": None,
    "a503": None,
    "_503 Service Unavailable": None,
    "5030 Service Unavailable": None,
    "HTTP 200": None,
    "took 404 ms": None,
}


@pytest.mark.parametrize("text", sorted(HTTP))
def test_http_category_reads_a_code_only_with_its_context(text):
    assert lex.http_category(text) == HTTP[text]


OS = {
    "open x: EACCES": "permission",
    "WSAECONNREFUSED": "network",
    "EAI_AGAIN": "network",
    "ERROR_FILE_NOT_FOUND": "not_found",
    "WAIT_TIMEOUT": "timeout",
    "connect: Connection refused": "network",
    "XEACCES here": None,  # inside a longer word
    "_EACCES": None,
    "EACCES=1": None,  # a setting's key
    "xconnection refused": None,
    "EFOOBAR happened": None,  # an E-word that is no code
}


@pytest.mark.parametrize("text", sorted(OS))
def test_os_reason_reads_codes_and_messages_as_words(text):
    assert lex.os_reason(text) == OS[text]


TRAILING = {
    "error: unable to create compilation: AccessDenied": "permission",
    "open config.yml: EACCES": "permission",
    "x: error.AccessDenied.": "permission",
    "x:   NoSuchKey  ": "not_found",
    "x:    NoSuchKey": None,  # more than three spaces after the colon
    "x: accessdenied": None,  # a lower-case word is no error name
    "x: ConnectionPool": None,  # a thing, not an outcome
    "x: AccessDenied and more": None,  # not at the line's end
    "no colon AccessDenied": None,
    "first: AccessDenied\nsecond line": "permission",  # any line of the text
}


@pytest.mark.parametrize("text", sorted(TRAILING))
def test_trailing_reason_reads_a_name_ending_a_line_after_a_colon(text):
    assert lex.trailing_reason(text) == TRAILING[text]


NAMED = {
    "raised FooTimeoutError.": "timeout",
    "FooTimeoutError==3": "timeout",  # a comparison, not a setting
    "in /srv/FooTimeoutError/x": None,  # a path's part
    "$FooTimeoutError": None,
    "-FooTimeoutError": None,
    "_FooTimeoutError": None,
    "xFooTimeoutError": None,
    "FooTimeoutError=3": None,  # a setting's key
    "FooTimeoutError-x": None,
    "FooTimeoutError/": None,
    "TestFooTimeout": None,  # a test's name
    "FooTimeoutTest": None,
    "SHOULD_TIMEOUT": None,
    "HttpClient": None,  # a thing
    "raised TimeoutErrors": "timeout",  # a plural error word ends a name too
    "resolver raised UnknownHost today": "network",  # an absence first
    "MissingToken seen": "not_found",
    "got NoSuchThing": "not_found",
    "socket AddressInUse now": "network",  # an outcome of two words at the end
    "SpecsTimeoutError here": None,  # a test's name, whichever test word
    "TestsTimeoutError x": None,
    "TimeoutErrorTests here": None,
    "grpc status UNAUTHENTICATED returned": "permission",  # a published code of one word, in capitals
    "NoSuchKeyTest here": None,  # a test's name though an absence opens it
    "NoSuchKeySpec here": None,
    "a -FooTimeoutError": None,
    "x $FooTimeoutError": None,
    "pool ConnectionPool then AccessDenied": "permission",  # the first name that states an outcome
    "see HTTP 503 for ConnectionPool": "network",  # no name: the HTTP status
}


@pytest.mark.parametrize("text", sorted(NAMED))
def test_named_category_reads_only_names_that_state_an_outcome(text):
    assert lex.named_category(text) == NAMED[text]
    assert _named_by_search(text) == NAMED[text]


def test_text_category_takes_the_operating_systems_reason_before_a_name():
    assert lex.text_category("AccessDenied: ECONNREFUSED") == "network"
    assert lex.text_category("raised FooTimeoutError") == "timeout"
    assert lex.text_category("nothing to see") is None


@pytest.mark.parametrize(
    "name,words",
    [
        ("SocketTimeoutException", ["socket", "timeout", "exception"]),
        ("ER_ACCESS_DENIED_ERROR", ["er", "access", "denied", "error"]),
        ("AddrInUse", ["addr", "in", "use"]),
        ("HTTPServerError", ["http", "server", "error"]),
        ("Error404NotFound", ["error", "404", "not", "found"]),
        ("", []),
    ],
)
def test_split_name_gives_the_lower_case_words(name, words):
    assert lex.split_name(name) == words


def test_published_category_reads_only_published_names():
    assert lex.published_category("builtins.PermissionError") == "permission"
    assert lex.published_category("  ECONNRESET ") == "network"
    assert lex.published_category("grpc::DEADLINE_EXCEEDED") == "timeout"
    assert lex.published_category("FooTimeoutError") is None  # its words would say timeout; it is not published
    assert "IOException" in lex.WRAPPERS and "OSError" in lex.WRAPPERS and "RuntimeError" not in lex.WRAPPERS


def test_every_published_kind_name_gives_its_documented_category_wherever_it_stands():
    # _NAMED's names (Rust's io::ErrorKind, gRPC's codes, .NET's SocketError, Go's os errors, Java's): alone, qualified,
    # at a line's end after a colon, and in running text
    cats = set(es.CATEGORIES)
    for name, cat in lex._NAMED.items():
        assert cat in cats, name
        assert lex.name_category(name) == cat, name
        assert lex.published_category(f"pkg.mod.{name}") == cat, name
        assert lex.trailing_reason(f"step failed: {name}") == cat, name
        if len(lex.split_name(name)) >= 2:  # (one capitalised word, Unavailable, is an English word in running text)
            assert lex.named_category(f"the call returned {name} after a while") == cat, name


# the published kind names with their documented categories, written out (a test that iterated the table itself could
# not see a name misspelt in it)
PUBLISHED = {
    "NotFound": "not_found",
    "PermissionDenied": "permission",
    "ConnectionRefused": "network",
    "ConnectionReset": "network",
    "ConnectionAborted": "network",
    "NotConnected": "network",
    "AddrInUse": "network",
    "AddrNotAvailable": "network",
    "BrokenPipe": "network",
    "HostUnreachable": "network",
    "NetworkUnreachable": "network",
    "NetworkDown": "network",
    "TimedOut": "timeout",
    "OutOfMemory": "out_of_memory",
    "StorageFull": "out_of_memory",
    "FilesystemQuotaExceeded": "out_of_memory",
    "ReadOnlyFilesystem": "permission",
    "Unavailable": "network",
    "UNAVAILABLE": "network",
    "DeadlineExceeded": "timeout",
    "DEADLINE_EXCEEDED": "timeout",
    "ResourceExhausted": "rate_limit",
    "RESOURCE_EXHAUSTED": "rate_limit",
    "Unauthenticated": "permission",
    "UNAUTHENTICATED": "permission",
    "NOT_FOUND": "not_found",
    "PERMISSION_DENIED": "permission",
    "AddressAlreadyInUse": "network",
    "HostNotFound": "network",
    "FormatException": "type_error",
    "InsufficientExecutionStackException": "out_of_memory",
    "ErrNotExist": "not_found",
    "ErrPermission": "permission",
    "ErrDeadlineExceeded": "timeout",
    "BindException": "network",
    "NoRouteToHostException": "network",
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_each_published_kind_name_as_documented(name):
    assert lex.name_category(name) == PUBLISHED[name]
    assert lex.trailing_reason(f"request failed: {name}") == PUBLISHED[name]
