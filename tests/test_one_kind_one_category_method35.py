"""Signing method 35: three more failure kinds, one category in every runtime (docs/signatures.md, "Method 35").

- a name used that was never defined or bound is not_found (Python's NameError and UnboundLocalError, JavaScript's
  ReferenceError, Ruby's NameError, Perl's ``Undefined subroutine``, as PHP's ``Call to undefined function`` was);
- a null unwrapped is type_error (Rust's ``Option::unwrap()`` on ``None``, Swift's ``found nil while unwrapping``), as a
  null pointer dereference was in Java, Go, C# and Python;
- Go's strconv parse errors are type_error (a string that is not a number), as Java's NumberFormatException and Python's
  ``invalid literal for int()`` were.

Rules alone (the learned fallback off), as ``categorize`` reads them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract
from harness_memory.failure_lexicon import published_category


def rules(text: str) -> str:
    return categorize(extract(text))


UNDEFINED = [
    "Traceback (most recent call last):\n  File \"a.py\", line 2, in <module>\n    foo()\nNameError: name 'foo' is not defined",
    'Traceback (most recent call last):\n  File "a.py", line 3, in f\n'
    "UnboundLocalError: cannot access local variable 'x' where it is not associated with a value",
    "/app/index.js:3\n  foo();\n  ^\n\nReferenceError: foo is not defined\n    at Object.<anonymous> (/app/index.js:3:3)",
    "ReferenceError: Cannot access 'cfg' before initialization\n    at file:///app/main.mjs:2:13",
    "app.rb:3:in `<main>': undefined local variable or method `foo' for main:Object (NameError)",
    "app.rb:3:in `<main>': uninitialized constant Manifest::JSON (NameError)",
    "Undefined subroutine &main::slug_for called at bin/permalinks.pl line 9, <DATA> line 1.",
    "PHP Fatal error:  Uncaught Error: Call to undefined function foo() in /app/a.php:3",
]

NULL_UNWRAPPED = [
    "thread 'main' panicked at src/main.rs:5:20:\ncalled `Option::unwrap()` on a `None` value",
    "thread 'tests::parses' panicked at 'called `Option::unwrap()` on a `None` value', src/lib.rs:9:5",
    "Fatal error: Unexpectedly found nil while unwrapping an Optional value",
    "Fatal error: Unexpectedly found nil while implicitly unwrapping an Optional value: file App/main.swift, line 4",
    # the neighbours it joins
    "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation]",
    'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()" because "s" is null',
]

NOT_A_NUMBER = [
    'panic: strconv.Atoi: parsing "abc": invalid syntax',
    'strconv.ParseFloat: parsing "1,5": invalid syntax',
    'Error: strconv.ParseInt: parsing "99999999999999999999": value out of range',
    'Exception in thread "main" java.lang.NumberFormatException: For input string: "abc"',
]


@pytest.mark.parametrize("text", UNDEFINED)
def test_a_name_never_defined_is_not_found_in_every_runtime(text):
    assert rules(text) == "not_found", text


@pytest.mark.parametrize("text", NULL_UNWRAPPED)
def test_a_null_unwrapped_is_a_type_error_in_every_runtime(text):
    assert rules(text) == "type_error", text


@pytest.mark.parametrize("text", NOT_A_NUMBER)
def test_a_string_that_is_not_a_number_is_a_type_error_in_go_too(text):
    assert rules(text) == "type_error", text


@pytest.mark.parametrize(
    "text, expected",
    [
        # a package's export map that does not define a subpath is no undefined name: since method 43 node's
        # module-loading code names it, an import that failed (heldout16's log of it was labelled so)
        (
            "Error [ERR_PACKAGE_PATH_NOT_EXPORTED]: Package subpath './lib/x' is not defined by \"exports\" in "
            "/app/node_modules/pkg/package.json",
            "import_error",
        ),
        # a method called on a value that lacks it keeps type_error (Ruby's NoMethodError is a NameError)
        ("app.rb:3:in `<main>': undefined method `upcase' for nil (NoMethodError)", "type_error"),
        ("a.rb:1:in `<main>': undefined method `frobnicate' for an instance of String (NoMethodError)", "type_error"),
        # Option's unwrap of a value that is there, or an Err, is not a null
        (
            "thread 'main' panicked at src/main.rs:3:40:\ncalled `Result::unwrap()` on an `Err` value: Os { code: 2, kind: NotFound, "
            'message: "No such file or directory" }',
            "not_found",
        ),
        # words about names that state no failure
        ("every name is defined in config.py", "unknown"),
    ],
)
def test_the_neighbours_keep_their_category(text, expected):
    assert rules(text) == expected, text


@pytest.mark.parametrize(
    "name, expected",
    [
        ("NameError", "not_found"),
        ("UnboundLocalError", "not_found"),
        ("ReferenceError", "not_found"),
        ("NoMethodError", "type_error"),
    ],
)
def test_the_published_names(name, expected):
    assert published_category(name) == expected


@settings(max_examples=100, deadline=None)
@given(
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True),
    func=st.sampled_from(["Atoi", "ParseInt", "ParseFloat", "ParseBool", "ParseUint"]),
    value=st.text(alphabet="abcxyz019.,- ", min_size=1, max_size=12),
)
def test_any_name_and_value(name, func, value):
    assert rules(f"NameError: name '{name}' is not defined") == "not_found"
    assert rules(f"ReferenceError: {name} is not defined") == "not_found"
    assert rules(f'panic: strconv.{func}: parsing "{value}": invalid syntax') == "type_error"
