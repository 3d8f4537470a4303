"""Signing method 34: one failure kind, one category in every language (docs/signatures.md, "Method 34").

- arithmetic on a value outside the operation's domain (division or modulo by zero) is type_error, like any value an
  operation cannot take, whether the runtime names an exception class or only prints its words;
- an index outside its array, list, slice or string is not_found, like a key that is not there.

Before, the same failure got four categories across seven runtimes (Python's ZeroDivisionError not_found by the learned
fallback, Java's ArithmeticException type_error, Go's and Perl's unknown, Rust's test_failure, ...). The rules are
checked alone (the learned fallback off), as ``categorize`` reads them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract
from harness_memory.failure_lexicon import name_category, published_category


def rules(text: str) -> str:
    return categorize(extract(text))


DIVISION = [
    'Traceback (most recent call last):\n  File "calc.py", line 3, in <module>\n    print(1 / 0)\n'
    "ZeroDivisionError: division by zero",
    'Traceback (most recent call last):\n  File "calc.py", line 3, in <module>\n    math.exp(1000)\n'
    "OverflowError: math range error",
    'Exception in thread "main" java.lang.ArithmeticException: / by zero\n\tat Calc.main(Calc.java:3)',
    "Unhandled exception. System.DivideByZeroException: Attempted to divide by zero.\n"
    "   at Program.Main() in /src/Program.cs:line 5",
    "thread 'main' panicked at src/main.rs:4:13:\nattempt to divide by zero\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
    "thread 'main' panicked at src/main.rs:3:5:\nattempt to calculate the remainder with a divisor of zero",
    "panic: runtime error: integer divide by zero\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:5 +0x1d\n"
    "exit status 2",
    "PHP Fatal error:  Uncaught DivisionByZeroError: Division by zero in /src/calc.php:3",
    "PHP Fatal error:  Uncaught DivisionByZeroError: Modulo by zero in /src/calc.php:3",
    "calc.rb:2:in `/': divided by 0 (ZeroDivisionError)\n\tfrom calc.rb:2:in `<main>'",
    "Illegal division by zero at calc.pl line 2.",
    './run.sh: line 3: 10 / 0: division by 0 (error token is "0")',
    "ERROR:  division by zero",
    "Fatal error: Division by zero",
]

INDEX = [
    'Traceback (most recent call last):\n  File "a.py", line 2, in <module>\n    xs[5]\nIndexError: list index out of range',
    'Exception in thread "main" java.lang.ArrayIndexOutOfBoundsException: Index 5 out of bounds for length 3\n'
    "\tat A.main(A.java:3)",
    'Exception in thread "main" java.lang.StringIndexOutOfBoundsException: index 9, length 3\n\tat A.main(A.java:3)',
    "java.lang.IndexOutOfBoundsException: Index 4 out of bounds for length 2",
    "thread 'main' panicked at src/main.rs:3:5:\nindex out of bounds: the len is 3 but the index is 5",
    "thread 'main' panicked at src/main.rs:3:5:\nbyte index 10 is out of range of `abc`",
    "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:",
    "panic: runtime error: slice bounds out of range [:5] with capacity 3",
    "Unhandled exception. System.IndexOutOfRangeException: Index was outside the bounds of the array.",
    "Fatal error: Index out of range",
    "a.rb:2:in `fetch': index 5 outside of array bounds: -4...4 (IndexError)",
    "Error: Index was outside the bounds of the array.",  # the words alone, without .NET's class
]


@pytest.mark.parametrize("text", DIVISION)
def test_division_by_zero_is_a_value_the_operation_cannot_take_in_every_runtime(text):
    assert rules(text) == "type_error", text


@pytest.mark.parametrize("text", INDEX)
def test_an_index_outside_its_sequence_is_not_found_in_every_runtime(text):
    assert rules(text) == "not_found", text


@pytest.mark.parametrize(
    "text, expected",
    [
        # a number out of range without an index is neither (ERANGE is left without a category on purpose)
        ("OSError: [Errno 34] Numerical result out of range", "unknown"),
        # JavaScript's RangeError is also its stack overflow: the name alone does not decide (Ruby's RangeError is
        # not in the lexicon, which looks names up by their last part)
        ("RangeError: Maximum call stack size exceeded\n    at f (/app/index.js:2:10)", "out_of_memory"),
        # words about zero division that state no failure
        ("the zero-division check passed", "unknown"),
        # a path is no evidence
        ("cp: cannot stat '/srv/by zero/notes.txt': No such file or directory", "not_found"),
        # a key not there stays not_found; a value of the wrong type stays type_error
        ("KeyError: 'host'", "not_found"),
        ("TypeError: unsupported operand type(s) for /: 'int' and 'str'", "type_error"),
    ],
)
def test_the_neighbours_keep_their_category(text, expected):
    assert rules(text) == expected, text


@pytest.mark.parametrize(
    "name, expected",
    [
        ("ZeroDivisionError", "type_error"),
        ("ArithmeticError", "type_error"),
        ("FloatingPointError", "type_error"),
        ("ArithmeticException", "type_error"),
        ("FloatDomainError", "type_error"),
        ("Math::DomainError", "type_error"),
        ("IndexError", "not_found"),
        ("LookupError", "not_found"),
        ("ArrayIndexOutOfBoundsException", "not_found"),
        ("StringIndexOutOfBoundsException", "not_found"),
        # Ruby's iteration end and decimal's trapped conditions are not failures of these kinds
        ("StopIteration", None),
        ("ClosedQueueError", None),
        ("Inexact", None),
        ("Rounded", None),
        ("RangeError", None),
        ("FloatOperation", "type_error"),
    ],
)
def test_the_published_hierarchies_give_these_classes_their_kind(name, expected):
    assert published_category(name) == expected, name


@pytest.mark.parametrize(
    "name, expected",
    [
        ("DivideByZeroException", "type_error"),
        ("OverflowArithmeticException", "type_error"),
        ("IndexOutOfRangeException", "not_found"),
        ("KotlinIndexOutOfBoundsError", "not_found"),
    ],
)
def test_a_name_s_words_say_it_where_no_table_lists_it(name, expected):
    assert name_category(name) == expected, name


_RUNTIMES = st.sampled_from(
    [
        "panic: runtime error: {}",
        "thread 'main' panicked at src/lib.rs:9:5:\n{}",
        "Fatal error: {}",
        "ERROR: {}",
        "error: {}",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    runtime=_RUNTIMES,
    verb=st.sampled_from(["divide", "division", "divided", "modulo", "integer divide", "attempt to divide"]),
    zero=st.sampled_from(["zero", "0"]),
    # (numbers that read as HTTP statuses elsewhere included: a quantity a word names is no status)
    index=st.one_of(st.sampled_from([401, 403, 404, 429, 500, 502, 503, 504]), st.integers(-5, 10**6)),
    length=st.one_of(st.sampled_from([401, 403, 404, 429, 500, 502, 503, 504]), st.integers(0, 10**6)),
)
def test_a_runtime_s_words_decide_whatever_the_numbers_and_the_prefix(runtime, verb, zero, index, length):
    assert rules(runtime.format(f"{verb} by {zero}")) == "type_error"
    assert rules(runtime.format(f"index out of range [{index}] with length {length}")) == "not_found"
    assert rules(runtime.format(f"Index {index} out of bounds for length {length}")) == "not_found"
    assert rules(runtime.format(f"index out of bounds: the len is {length} but the index is {index}")) == "not_found"


@pytest.mark.parametrize(
    "text",
    [
        "ERROR: No matching distribution found for foo==9.9",  # pip: import_error before method 34 too
        "npm ERR! code ETARGET\nnpm ERR! notarget No matching version found for is-odd@^42.1.0.",
        "npm error code ETARGET\nnpm error notarget No matching version found for is-odd@^42.1.0.",
        "ERR_PNPM_NO_MATCHING_VERSION  No matching version found for is-odd@^42.1.0",
        "go: github.com/pkg/errors@v9.9.9: reading github.com/pkg/errors/go.mod at revision v9.9.9: unknown revision v9.9.9",
        'error: failed to select a version for the requirement `serde = "^9.9"`',
    ],
)
def test_a_version_the_registry_does_not_have_is_import_error_in_every_package_manager(text):
    assert rules(text) == "import_error", text


def test_git_s_unknown_revision_of_a_ref_is_no_missing_package():
    assert rules("fatal: ambiguous argument 'v1.2.3': unknown revision or path not in the working tree.") != (
        "import_error"
    )


ARCHIVES = [
    "gzip: stdin: not in gzip format\ntar: Child returned status 1\ntar: Error is not recoverable: exiting now",
    "gzip: stdin: unexpected end of file\ntar: Unexpected EOF in archive\ntar: Error is not recoverable: exiting now",
    "xz: (stdin): File format not recognized",
    "xz: (stdin): Unexpected end of input",
    "bzip2: Compressed file ends unexpectedly;\n\tperhaps it is corrupted?  *Possible* reason follows.",
    "bzip2: (stdin) is not a bzip2 file.",
    "ps-linux-x64.tar.zst : Read error (39) : premature end",
    "zstd: /*stdin*\\: unsupported format",
    'Traceback (most recent call last):\n  File "fetch.py", line 7, in unpack\n'
    "    with zipfile.ZipFile(path) as z:\nzipfile.BadZipFile: File is not a zip file",
    "End-of-central-directory signature not found.  Either this file is not\n"
    "  a zipfile, or it constitutes one disk of a multi-part archive.",
    "tar: This does not look like a tar archive\ntar: Exiting with failure status due to previous errors",
    "java.util.zip.ZipException: zip END header not found",
    "Error: invalid gzip header",
    "unzip:  cannot find zipfile directory in one of app.zip",
    "7z: ERROR: app.7z : Can not open the file as archive",
    "gzip: app.tar.gz: invalid compressed data--format violated",
    "/usr/bin/ld: build/libfoo.a: file format not recognized; treating as linker script",
    # each format's words in the other shapes (a key per format: mutation testing found two untested)
    *(
        f"error: dist/app.{ext} is not a {f} file"
        for f, ext in [("gzip", "gz"), ("zip", "zip"), ("zstd", "zst"), ("7z", "7z")]
    ),
    *(f"error: dist/app.{ext}: not in {f} format" for f, ext in [("zip", "zip"), ("bzip2", "bz2"), ("lzma", "lzma")]),
    *(f"error: bad {f} header in dist/app.bin" for f in ("zip", "zlib", "deflate", "tar")),
]


@pytest.mark.parametrize("text", ARCHIVES)
def test_an_archive_that_is_truncated_or_of_another_format_does_not_parse_in_every_tool(text):
    assert rules(text) == "compile_error", text


@pytest.mark.parametrize(
    "text, expected",
    [
        # a connection's stream or a server's file that ends early is the network's, not a file that does not parse
        ("java.io.IOException: unexpected end of stream on http://api.example.com/...", "unknown"),
        ("Unexpected end of file from server", "unknown"),
        ("java.net.SocketException: Unexpected end of file from server", "network"),
        # Apache's CGI headers that ended early, and words about archives that state no failure
        ("[error] Premature end of script headers: index.php", "unknown"),
        ("the archive header was checked", "unknown"),
        # (never compile_error; a command the tool does not have is not_found since method 46, as ``unknown command``)
        ("Error: 7z is not a valid command", "not_found"),
    ],
)
def test_ends_that_are_not_an_archive_s_keep_their_category(text, expected):
    assert rules(text) == expected, text


@pytest.mark.parametrize(
    "text, expected",
    [
        # (review) a test of error handling quotes the failure it expected: the test's comparison is the failure
        (
            "thread 'main' panicked at src/calc.rs:9:5:\nassertion `left == right` failed: division by zero must be an "
            "error\n  left: Ok(0)\n right: Err(DivByZero)",
            "assertion",
        ),
        (
            '    list_test.go:12: Get(5): want error "index out of range", got nil\n--- FAIL: TestGet (0.00s)',
            "assertion",
        ),
        (
            '=== RUN   TestDiv\n    calc_test.go:20: Div(1, 0) = 0, want error "division by zero"\n--- FAIL: TestDiv (0.00s)\n'
            "FAIL\nFAIL\texample.com/calc\t0.002s\n",
            "assertion",
        ),
        (
            "FAILED tests/test_archive.py::test_extract - AssertionError: assert 'unexpected end of file' in ''",
            "assertion",
        ),
        # an exception a test expected (RSpec's matcher names the class at the line's end, as Ruby's uncaught exception
        # line does)
        (
            "Failures:\n\n  1) Calc#div raises on zero\n     Failure/Error: expect { calc.div(1, 0) }.to "
            "raise_error(ZeroDivisionError)\n       expected ZeroDivisionError but nothing was raised\n",
            "assertion",
        ),
        ("Failure/Error: expect { h.fetch(:x) }.to raise_error(KeyError)", "assertion"),
        ("calc.rb:2:in `/': divided by 0 (ZeroDivisionError)", "type_error"),  # raised, not expected
        # a compiler's explanation is no test's comparison (GHC's type error: a compiled source's, compile_error)
        ("Config.hs:5:7: error:\n    • Couldn't match expected type ‘Int’ with actual type ‘[Char]’", "compile_error"),
        (
            "** (CompileError) lib/a.ex:9: undefined function replace_char/1 (expected A to define such a function, but none are available)",
            "compile_error",
        ),
        # a connection's end, and numbers that are no division by zero or status
        ("SSL_connect: unexpected end of file", "network"),
        ("error: RPC failed; curl 56 OpenSSL SSL_read: unexpected end of file", "network"),
        ("Error: divided by 0.5 exceeds the limit", "unknown"),
        ("make: *** No rule to make target 'etarget'.  Stop.", "not_found"),
        ("panic: runtime error: slice bounds out of range [:503] with capacity 3", "not_found"),
        ("Error: Index out of range: 503", "not_found"),
        (
            "Unhandled exception. System.ArgumentOutOfRangeException: Index was out of range. Must be non-negative and "
            "less than the size of the collection. (Parameter 'index')",
            "not_found",
        ),
        # C++'s uncaught standard exceptions
        (
            "terminate called after throwing an instance of 'std::out_of_range'\n  what():  vector::_M_range_check: __n "
            "(which is 5) >= this->size() (which is 3)\nAborted (core dumped)",
            "not_found",
        ),
        (
            "terminate called after throwing an instance of 'std::bad_optional_access'\n  what():  bad optional access",
            "type_error",
        ),
        ("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc", "out_of_memory"),
    ],
)
def test_the_review_s_cases(text, expected):
    assert rules(text) == expected, text


@pytest.mark.parametrize(
    "name, expected",
    [
        ("out_of_range", "not_found"),
        ("domain_error", "type_error"),
        ("overflow_error", "type_error"),
        ("underflow_error", "type_error"),
        ("range_error", "type_error"),
        ("bad_cast", "type_error"),
        ("bad_any_cast", "type_error"),
        ("bad_variant_access", "type_error"),
        ("bad_optional_access", "type_error"),
        ("runtime_error", "unknown"),  # no category of its own: its what() may say one
        ("logic_error", "unknown"),
    ],
)
def test_every_cpp_standard_exception_uncaught_gives_its_category(name, expected):
    """(mutation testing: three of the table's entries had no case) C++'s terminate line names the class."""
    text = f"terminate called after throwing an instance of 'std::{name}'\n  what():  boom\nAborted (core dumped)"
    assert rules(text) == expected, name
