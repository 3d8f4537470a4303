"""Failure classes met in the heldout8 split of the CI-log corpus (signing method 11), each written as a
general property in several tools' words, on inputs written for the test in the shape the tools print, and
one test per log family of that split (the real logs, tests/fixtures/ci_logs)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import clean_lines, extract

CORPUS = Path(__file__).parent / "fixtures" / "ci_logs"
LABELS = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
HELDOUT8 = {rel: v for rel, v in LABELS.items() if v["split"] == "heldout8"}


def category(text: str) -> str:
    return categorize(extract(text))


def span(ex) -> tuple[int, int]:
    assert ex.lines is not None
    return ex.lines


def _text(rel: str) -> str:
    data = (CORPUS / rel).read_bytes()
    if rel.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


@pytest.mark.parametrize("family", sorted({v["family"] for v in HELDOUT8.values()}))
def test_each_heldout8_family_is_signed_from_its_marked_lines_with_its_category(family):
    for rel, label in HELDOUT8.items():
        if label["family"] != family:
            continue
        ex = extract(_text(rel))
        lo, hi = span(ex)
        assert any(lo <= b and a <= hi for a, b in label["lines"]), (rel, ex.lines, ex.message)
        assert categorize(ex) == label["category"], (rel, ex.message)


# -- ant's task column ---------------------------------------------------------------------------------
ANT = """\
Buildfile: /var/lib/jenkins/workspace/units/build.xml

test:
    [junit] Running com.acme.units.LengthTest
    [junit] Tests run: 1, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 sec
    [junit] Testcase: inchesToCm took 0.01 sec
    [junit] \tFAILED
    [junit] expected:<2.54> but was:<2.5>
    [junit] junit.framework.AssertionFailedError: expected:<2.54> but was:<2.5>
    [junit] \tat com.acme.units.LengthTest.inchesToCm(Unknown Source)
    [junit] \tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)

BUILD FAILED
/var/lib/jenkins/workspace/units/build.xml:17: Test com.acme.units.LengthTest failed

Total time: 2 seconds
"""

ANT_JAVA = """\
run:
     [java] Exception in thread "main" java.io.FileNotFoundException: data/rates.csv (No such file or directory)
     [java] \tat java.base/java.io.FileInputStream.open0(Native Method)
     [java] \tat com.acme.Rates.main(Rates.java:12)

BUILD FAILED
/home/alice/src/rates/build.xml:30: Java returned: 1
"""


def test_ants_task_column_is_a_prefix_not_part_of_the_message():
    assert (
        clean_lines("    [javac] Foo.java:3: error: cannot find symbol")[0].text
        == "Foo.java:3: error: cannot find symbol"
    )
    assert (
        clean_lines("     [java] \tat com.acme.Rates.main(Rates.java:12)")[0].text
        == "\tat com.acme.Rates.main(Rates.java:12)"
    )
    # a tag at the start of a line (prettier's list of files) is not a task column
    assert clean_lines("[warn] src/app.js")[0].text == "[warn] src/app.js"


@pytest.mark.parametrize(
    ("text", "expected", "line"), [(ANT, "assertion", 9), (ANT_JAVA, "not_found", 2)], ids=["junit", "java"]
)
def test_an_ant_tasks_exception_is_the_failure_not_ants_closing_pointer(text, expected, line):
    ex = extract(text)
    assert categorize(ex) == expected
    assert span(ex)[0] <= line <= span(ex)[1], (ex.lines, ex.message)


# -- a location in (line, col) form followed by the severity (Nim, Free Pascal), and gfortran's header ---
@pytest.mark.parametrize(
    "text",
    [
        "/home/alice/src/wc/src/wc.nim(11, 20) Error: type mismatch: got 'string' for '\"0\"' but expected 'int'\n",
        'Compiling hello.pas\nhello.pas(5,3) Error: Identifier not found "writelnn"\nhello.pas(7) Fatal: There were 1 errors\n',
        "src/heat.f90:10:28:\n\n   10 |   u = u + alpha\n      |           1\nError: Symbol 'alpha' at (1) has no IMPLICIT type\n",
    ],
    ids=["nim", "free-pascal", "gfortran"],
)
def test_a_compilers_diagnostic_in_other_location_forms_is_a_compile_error(text):
    assert category(text) == "compile_error"


def test_gfortrans_error_takes_the_location_header_above_it():
    ex = extract("make\nsrc/heat.f90:10:28:\n\n   10 |   u = u + alpha\n      |           1\nError: Symbol 'alpha'\n")
    assert span(ex) == (2, 6) and ex.message.startswith("src/heat.f90:10:28: Error:")
    # a location line that another statement separates from the error is not its header
    ex = extract("src/a.f90:3:1:\nmake: *** [all] Error 1 happened\nError: Unclassifiable statement\n")
    assert not ex.message.startswith("src/a.f90")


# -- a file that does not parse; an unresolved class or symbol; a malformed expression -------------------
@pytest.mark.parametrize(
    "text",
    [
        "[INFO] Scanning for projects...\n[ERROR] [ERROR] Some problems were encountered while processing the POMs:\n"
        "[FATAL] Non-parseable POM /w/pom.xml: end tag name </dependncy> must match start tag name <dependency> @ line 20\n",
        "Loading settings\nerror: failed to parse manifest at `/w/Cargo.toml`\n",
        "/w/src/main/groovy/Changelog.groovy: 14: unable to resolve class MarkdownFormatter\n @ line 14, column 19.\n",
        'extra characters after close-quote\n    while executing\n"puts "a"b"\n    (file "gen.tcl" line 3)\n',
        "│ Error: Invalid 'for' expression\n│\n│   on main.tf line 19, in output \"fqdns\":\n"
        "│ Extra characters after the end of the 'for' expression.\n",
    ],
    ids=["maven-pom", "cargo-manifest", "groovyc", "tcl", "terraform-hcl"],
)
def test_a_file_that_does_not_parse_or_a_class_that_does_not_resolve_is_a_compile_error(text):
    assert category(text) == "compile_error"


# -- a plugin or artifact that could not be resolved ------------------------------------------------------
OFFLINE = (
    "[ERROR] Plugin org.apache.maven.plugins:maven-failsafe-plugin:3.2.5 or one of its dependencies could not be "
    "resolved: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact "
    "org.apache.maven.plugins:maven-failsafe-plugin:jar:3.2.5 has not been downloaded from it before. -> [Help 1]\n"
)
UNREACHABLE = (
    "[ERROR] Plugin org.apache.maven.plugins:maven-clean-plugin:2.5 or one of its dependencies could not be resolved: "
    "Could not transfer artifact org.apache.maven.plugins:maven-clean-plugin:pom:2.5 from/to central: Unknown host "
    "repo.example.com: Name or service not known -> [Help 1]\n"
)


def test_an_artifact_that_could_not_be_resolved_is_a_missing_dependency_unless_the_network_is_named():
    assert category("[INFO] BUILD FAILURE\n" + OFFLINE) == "import_error"
    assert category("> Could not resolve all dependencies for configuration ':compile'.\n" + OFFLINE) == "import_error"
    assert category("[INFO] BUILD FAILURE\n" + UNREACHABLE) == "network"
    # the reason named in the same line decides, whichever environment reason it is
    for reason, expected in (
        ("status code: 429, reason phrase: Too Many Requests (429)", "rate_limit"),
        ("Read timed out", "timeout"),
        ("Connect to repo.example.com:443 failed: Connection refused", "network"),
    ):
        line = f"[ERROR] Failed to execute goal on project x: Could not resolve dependencies: Could not transfer artifact g:a:jar:1.0 from/to central: {reason} -> [Help 1]\n"
        assert category(line) == expected, reason
    # a library that is missing stays missing, whatever letters its name holds (libssl, openssl)
    assert category("configure: error: libcurl is required: install libcurl4-openssl-dev\n") == "import_error"


# -- a test framework's report at a source location; a failed check of an expression ------------------------
GTEST = """\
[ RUN      ] GeohashTest.EncodesLength
/w/test/geohash_test.cpp:13: Failure
Expected equality of these values:
  geohash_encode(-33.8, 151.2, 8).size()
    Which is: 7
  8u
[  FAILED  ] GeohashTest.EncodesLength (0 ms)
[  FAILED  ] 1 test, listed below:
[  FAILED  ] GeohashTest.EncodesLength
"""
GTEST_BOOL = """\
[ RUN      ] Parser.AcceptsEmpty
/w/test/parser_test.cc:21: Failure
Value of: parse("").ok()
  Actual: false
Expected: true
[  FAILED  ] Parser.AcceptsEmpty (0 ms)
"""


@pytest.mark.parametrize("text", [GTEST, GTEST_BOOL], ids=["expect-eq", "expect-true"])
def test_a_test_frameworks_report_at_a_source_location_is_not_a_compilers(text):
    ex = extract(text)
    assert categorize(ex) == "assertion"
    assert span(ex)[0] == 2  # the report, not gtest's "listed below" pointer


def test_a_bare_test_report_at_a_location_is_a_test_failure_not_a_compile_error():
    assert category("/w/test/x_test.cpp:12: FAILED:\n") == "test_failure"


@pytest.mark.parametrize(
    "text",
    [
        "[Suite] parse\n    /b/tests/test_semver.nim(8, 18): Check failed: v.patch == 2\n    v.patch was 4\n"
        "  [FAILED] plain version\nError: execution of an external program failed: '/b/tests/test_semver '\n",
        "F1126 12:00:00.000123  4711 ring.cc:42] Check failed: size >= 0 (-1 vs. 0)\n*** Check failure stack trace: ***\n",
    ],
    ids=["nim-unittest", "glog-check"],
)
def test_a_failed_check_of_an_expression_is_an_assertion(text):
    assert category(text) == "assertion"


def test_a_runners_report_that_the_program_it_ran_failed_is_a_trailer():
    ex = extract("    /b/t.nim(3, 9): Check failed: a == b\nError: execution of an external program failed: '/b/t '\n")
    assert span(ex)[0] == 1


# -- a test process that died -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "[ERROR] The forked VM terminated without properly saying goodbye. VM crash or System.exit called?\n"
        "[ERROR] Process Exit Code: 3\n[ERROR] Crashed tests:\n[ERROR] com.acme.ExporterTest\n",
        "[ERROR] ExecutionException The forked VM terminated without saying properly goodbye.\n",  # Surefire 2.19's words
        "[ERROR] There was an error in the forked process: VM crash\n",
    ],
    ids=["surefire-2.22", "surefire-2.19", "vm-crash"],
)
def test_a_test_jvm_that_died_is_a_test_failure(text):
    assert category(text) == "test_failure"


# -- a located finding that names its check ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[ERROR] /w/src/A.java:4:8: Unused import - java.util.Map. [UnusedImports]\nAudit done.\n", "test_failure"),
        ("src/main/kotlin/Fee.kt:12:20: This expression contains a magic number. [MagicNumber]\n", "test_failure"),
        ("src/a.c:3:9: error: unused variable 'y' [-Werror=unused-variable]\n", "compile_error"),
        ("app/models.py:3: error: Incompatible types in assignment [assignment]\n", "type_error"),
    ],
    ids=["checkstyle", "detekt", "gcc-flag", "mypy-code"],
)
def test_a_located_finding_ending_in_its_checks_name_is_a_linters(text, expected):
    assert category(text) == expected


# -- connecting, finding, pointing below ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        'time="2026-11-26T18:10:16Z" level=error msg="Can\'t close tar writer: io: read/write on closed pipe"\n'
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
        "ERROR 2003 (HY000): Can't connect to MySQL server on '127.0.0.1:3306' (111)\n",
    ],
    ids=["docker", "mysql"],
)
def test_a_service_that_cannot_be_connected_to_is_network(text):
    ex = extract(text)
    assert categorize(ex) == "network"
    assert "onnect" in ex.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "* What went wrong:\nA problem occurred evaluating project ':render'.\n"
            "> Project with path ':pdf-commons' could not be found in project ':render'.\n",
            "not_found",
        ),
        ("Program.cs(3,7): error CS0246: The type or namespace name 'Foo' could not be found\n", "compile_error"),
    ],
    ids=["gradle-project", "csharp-compiler"],
)
def test_could_not_be_found_is_not_found_unless_a_compiler_says_it(text, expected):
    assert category(text) == expected


TERRAFORM = """\
╷
│ Error: Terraform encountered problems during initialisation, including problems
│ with the configuration, described below.
│
│ The Terraform configuration must be valid before initialization.
╵
╷
│ Error: Unsupported argument
│
│   on main.tf line 4, in resource "null_resource" "x":
│    4:   tirggers = {}
│
│ An argument named "tirggers" is not expected here. Did you mean "triggers"?
╵
"""


def test_a_statement_that_points_at_the_errors_below_gives_way_to_them():
    ex = extract(TERRAFORM)
    assert span(ex)[0] == 8 and "Unsupported argument" in ex.message


# -- the JUnit Platform console launcher ----------------------------------------------------------------------
CONSOLE = """\
\u2577
\u251c\u2500 JUnit Jupiter \u2714
\u2502  \u2514\u2500 IsbnTest \u2714
\u2502     \u2514\u2500 rejectsLetters() \u2718 expected: <true> but was: <false>
\u2514\u2500 JUnit Vintage \u2714

Failures (1):
  JUnit Jupiter:IsbnTest:rejectsLetters()
    MethodSource [className = 'com.acme.IsbnTest', methodName = 'rejectsLetters', methodParameterTypes = '']
    => org.opentest4j.AssertionFailedError: expected: <true> but was: <false>
       org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:55)
       com.acme.IsbnTest.rejectsLetters(IsbnTest.java:22)

Test run finished after 1432 ms
[         3 tests found           ]
[         0 tests aborted         ]
[         1 tests failed          ]
"""


def test_the_junit_consoles_failure_is_its_exception_not_its_count_boxes():
    ex = extract(CONSOLE)
    assert categorize(ex) == "assertion"
    assert ex.message.startswith("org.opentest4j.AssertionFailedError") and span(ex)[0] == 10
    only_tree = extract("\u2502     \u2514\u2500 rejectsLetters() \u2718 boom\n[         1 tests failed          ]\n")
    assert span(only_tree)[0] == 1  # the tree's failed mark is a statement, the count box is not


# -- kept behaviours the mutation sample of failure_excerpt (method 11 round) found untested ---------------------
def test_a_line_whose_only_failure_words_are_could_not_resolve_is_a_failure():
    ex = extract("Resolving dependencies\nCould not resolve all dependencies for configuration ':runtime'.\nDone\n")
    assert span(ex)[0] == 2


def test_a_java_exception_of_the_default_package_is_read_as_one():
    ex = extract("Loading rows\nBadInputException: row 3 has 2 fields\n\tat Loader.parse(Loader.java:14)\n")
    assert ex.exception == "BadInputException" and span(ex)[0] == 2


def test_a_warning_with_a_location_arrow_is_not_a_diagnostic_the_error_after_it_is():
    ex = extract(
        "warning: unused variable: `x`\n --> src/a.rs:2:9\n  |\n2 |     let x = 1;\n\n"
        "error: this comparison is always true\n --> src/b.rs:5:1\n"
    )
    assert span(ex)[0] == 6 and categorize(ex) == "compile_error"


def test_the_failing_step_is_the_last_one_with_a_specific_failure_of_any_strong_class():
    # a compiler's diagnostic (class 4) in an earlier step does not outrank a failing test (class 3) in a later one
    ex = extract(
        "+ make\nsrc/a.c:3:5: error: unknown type name 'foo'\n+ python -m pytest -q\n"
        "FAILED tests/test_a.py::test_b - AssertionError: assert 1 == 2\n"
    )
    assert span(ex)[0] == 4 and categorize(ex) == "assertion"


# -- kept behaviours the mutation sample of error_signatures (method 11 round) found untested ----------------------
def _chained(cause: str, raised: str) -> str:
    return (
        'Traceback (most recent call last):\n  File "/w/job.py", line 3, in step\n    step()\n'
        f"{cause}\n\nThe above exception was the direct cause of the following exception:\n\n"
        'Traceback (most recent call last):\n  File "/w/job.py", line 9, in <module>\n    main()\n'
        f"{raised}\n"
    )


@pytest.mark.parametrize(
    ("cause", "raised", "expected"),
    [
        # a block that says nothing of its own takes its cause's category
        ("FileNotFoundError: [Errno 2] No such file or directory: 'orders.csv'", "BatchAborted: batch 7", "not_found"),
        # a block that says something keeps it over a cause that is not about the environment
        ("KeyError: 'eu-west'", "AssertionError: lookup failed", "assertion"),
        # an environment category of the block itself stays, whatever environment its cause names
        ("TimeoutError: timed out", "RateLimited: 429 Too Many Requests", "rate_limit"),
    ],
    ids=["unknown-takes-cause", "assertion-keeps", "rate-limit-keeps"],
)
def test_a_chained_cause_decides_only_where_the_block_says_less(cause, raised, expected):
    assert category(_chained(cause, raised)) == expected


def test_a_linter_run_through_a_wrapper_with_flags_is_still_a_linter():
    # uv run --frozen yamllint: the wrapper's own flag is skipped, not taken for the program
    text = "+ uv run --frozen yamllint .\n.github/ci.yml\n  3:5  error  wrong indentation: expected 8 but found 6\n"
    assert category(text) == "test_failure"


def test_a_located_test_report_takes_the_category_the_lines_under_it_name():
    # Catch2: an unexpected exception under ``x.cpp:12: FAILED:`` says why the test failed
    text = (
        "/w/tests/config_test.cpp:12: FAILED:\n  REQUIRE( load_config() )\n"
        "due to unexpected exception with message:\n  cannot open cfg.json: No such file or directory\n"
    )
    assert category(text) == "not_found"
