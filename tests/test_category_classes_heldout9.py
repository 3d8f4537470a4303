"""Failure classes met in the heldout9 split of the CI-log corpus (signing method 12), each written as a general
property and tested on inputs of other tools and words than the split's logs; its logs, one test per log family, are
in tests/test_ci_corpus.py (tests/fixtures/ci_logs/README.md, "The `heldout9` split")."""

from __future__ import annotations

import pytest

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract, is_frame


def category(text: str) -> str:
    return categorize(extract(text))


# -- 1. a value of the wrong type in an operation, in more runtimes' words --------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Error in log(x) : non-numeric argument to mathematical function\nCalls: summarise -> log\nExecution halted",
        "app/cart.rb:12:in `+': no implicit conversion from nil to integer (TypeError)\n\tfrom app/cart.rb:12:in `total'",
        '** (ArithmeticError) bad argument in arithmetic expression\n    :erlang.+("3", 1)\n    lib/sum.ex:4: Sum.add/2',
        "escript: exception error: bad argument\n  in function  binary_to_list/1\n     called as binary_to_list(42)",
        "** exception error: badarg",
    ],
    ids=["r", "ruby", "elixir", "erlang", "erlang-badarg"],
)
def test_a_value_of_the_wrong_type_in_an_operation_is_a_type_error(text):
    assert category(text) == "type_error"


def test_any_runtime_s_null_pointer_exception_is_a_null_dereference():
    log = 'Exception in thread "main" kotlin.KotlinNullPointerException\n\tat app.MainKt.main(Main.kt:4)\n'
    assert category(log) == "type_error"
    assert category("java.lang.NullPointerException: x is null\n\tat a.B.c(B.java:3)") == "type_error"
    assert category("System.NullReferenceException: Object reference not set") == "type_error"


# -- 2. an HTTP client's error names its status: the status decides -------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("urllib.error.HTTPError: HTTP Error 429: Too Many Requests", "rate_limit"),
        ("requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://x.example/v1/a", "not_found"),
        ("requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: https://x.example/v1/a", "permission"),
        ("requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: https://x.example/", "network"),
        ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='x.example', port=443): 429", "network"),
    ],
    ids=["429", "404", "403", "503", "not-an-http-status-error"],
)
def test_an_http_status_error_takes_the_status_category(text, expected):
    assert category(text) == expected


# -- 3. more languages' words for a missing module, a compile error, a missing function or key, memory ---------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("lua: app.lua:1: module 'cjson' not found:\n\tno field package.preload['cjson']", "import_error"),
        ('File "bin/main.ml", line 4, characters 10-15:\nError: Unbound value prnt', "compile_error"),
        ("Error: Unbound constructor Circle", "compile_error"),
        ("PHP Fatal error:  Uncaught Error: Call to undefined method Cart::totl() in /app/index.php:9", "not_found"),
        ('can\'t read "env(API_TOKEN)": no such element in array', "not_found"),
        ("PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes)", None),
        ("cc1plus: out of memory; virtual memory exhausted", "out_of_memory"),
    ],
    ids=["lua-module", "ocaml-unbound-value", "ocaml-unbound-constructor", "php-method", "tcl-array", "php-oom", "cc1"],
)
def test_more_languages_words(text, expected):
    assert category(text) == (expected or "out_of_memory")


def test_a_ruby_exception_named_at_the_end_of_its_line_is_the_exception():
    line = "lib/feed.rb:7:in `parse': unexpected character: 'x' at line 1 column 1 (JSON::ParserError)"
    assert category(line) == "compile_error"  # a parser's error, by its class (``ParserError``), not its words
    assert category(line.rsplit(" (", 1)[0]) == "test_failure"  # the same words without the class say less
    assert category("lib/feed.rb:7:in `load': the value is nil here (NoMethodError)") == "type_error"


# -- 4. Elixir's uncaught exception line is the failure; ``path:line: (file)`` is a frame ------------------------
def test_an_elixir_uncaught_exception_is_chosen_over_the_runner_s_trailer():
    log = (
        "##[group]Run mix run scripts/seed.exs\nmix run scripts/seed.exs\n##[endgroup]\n"
        "** (RuntimeError) seed file has no rows\n    scripts/seed.exs:3: (file)\n    (elixir 1.14.0) lib/code.ex:1245: Code.require_file/2\n"
        "##[error]Process completed with exit code 1.\n"
    )
    ex = extract(log)
    assert (
        ex.message.startswith("** (RuntimeError) seed file has no rows") and ex.lines is not None and ex.lines[0] == 4
    )
    assert is_frame("    scripts/seed.exs:3: (file)") and is_frame("cart.exs:6: (module)")
    assert not is_frame("cart.exs:6: undefined function foo/0")
