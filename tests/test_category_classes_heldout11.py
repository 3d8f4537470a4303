"""Category classes met in the heldout11 split of the CI-log corpus (its first run: tests/fixtures/ci_logs/README.md,
"The `heldout11` split"), each written as a general rule of error_signatures' words and tested on inputs of other tools
and words than the split's logs; its logs, one test per log family, are in tests/test_ci_corpus.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import _by_text, categorize
from harness_memory.failure_excerpt import extract


def category(text: str) -> str:
    return categorize(extract(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        # a server certificate that does not verify: the connection cannot be made securely
        ("ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed", "network"),
        ('Get "https://registry.internal:5000/v2/": x509: certificate signed by unknown authority', "network"),
        (
            "fatal: unable to access 'https://git.example.org/x.git/': server certificate verification failed. "
            "CAfile: none CRLfile: none; unable to get local issuer certificate",
            "network",
        ),
        ("Error: certificate has expired", "network"),
        (
            "request to https://registry.example.org/ failed, reason: self signed certificate in certificate chain",
            "network",
        ),
        # storage or memory exhausted
        ("tar: out/pkg.tar: Wrote only 4096 of 10240 bytes: No space left on device", "out_of_memory"),
        ("write /var/lib/docker/tmp/layer: no space left on device", "out_of_memory"),
        ("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc", "out_of_memory"),
        # a package the resolver has no copy of and may not fetch; a class that cannot be found
        ("error: no matching package found\nsearched package name: `tokio`", "import_error"),
        ("go: golang.org/x/sync@v0.7.0: module lookup disabled by GOPROXY=off", "import_error"),
        (
            "PHP Fatal error:  Uncaught Error: Class 'GuzzleHttp\\Client' not found in /app/src/Api.php:12",
            "import_error",
        ),
        # a call that does not match its signature; a decoded value of the wrong type; a string used as a number
        ("lib/cart.rb:4:in `add': wrong number of arguments (given 1, expected 2..3) (ArgumentError)", "type_error"),
        (
            "decode settings.json: json: cannot unmarshal number into Go struct field Settings.name of type string",
            "type_error",
        ),
        ('expected integer but got "ten"', "type_error"),
        ('can\'t use non-numeric string as operand of "*"', "type_error"),
        # a method, a function, a source file or a table that does not exist
        ('Can\'t locate object method "render" via package "Report::Html" at bin/report line 22.', "not_found"),
        ("lua: app.lua:3: attempt to call a nil value (field 'trim')", "not_found"),
        (
            "CMake Error at src/CMakeLists.txt:12 (add_executable):\n  Cannot find source file:\n\n    cli/main.cpp",
            "not_found",
        ),
        ("Error: near line 2: no such column: created_at", "not_found"),
        ("Runtime error near line 7: no such table: invoices (1)", "not_found"),
        # a file of a tool's language that does not parse
        ("GNUmakefile:12: *** missing separator.  Stop.", "compile_error"),
        ("npm ERR! code EJSONPARSE\nnpm ERR! JSON.parse Failed to parse json", "compile_error"),
        # a sanitizer's report is a dynamic checker's finding
        ("==77==ERROR: LeakSanitizer: detected memory leaks", "test_failure"),
        ("WARNING: ThreadSanitizer: data race (pid=812)", "test_failure"),
    ],
)
def test_the_words_of_heldout11_s_classes_reach_their_category(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("lua: app.lua:3: attempt to index a nil value (global 'cfg')", "type_error"),  # a nil dereference stays
        ("lua: app.lua:9: attempt to call a nil value (local 'cb')", "type_error"),  # a nil callback, not a name
        ('Parse error near line 3: near "SELEC": syntax error', "compile_error"),  # the message decides, still
        ("Error: error reading certificate file /etc/ssl/x.pem: no such file", "not_found"),  # a missing file
        ("class Foo not found in any of the configured packages; quota exceeded", "rate_limit"),  # order unchanged
    ],
)
def test_neighbours_of_those_words_keep_their_category(text, expected):
    assert category(text) == expected


@settings(max_examples=150, deadline=None)
@given(
    line=st.integers(1, 99999),
    msg=st.sampled_from(["no such table: t", "no such column: c", "UNIQUE constraint failed: t.id"]),
)
def test_a_phase_label_is_not_the_category(line, msg):
    # SQLite prints "Parse error near line N:" before every statement that does not prepare: the message decides
    assert _by_text(f"Parse error near line {line}: {msg}") == _by_text(msg)
