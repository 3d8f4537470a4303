"""Gradle's failure report (``FAILURE: Build failed with an exception.`` then ``* What went wrong:``,
its causes each marked ``> ``, nested ones indented): the failure is what the report names, and the
same exception is one signature whether Gradle or the JVM printed it. Inputs written for the tests in
the shape Gradle prints (4.x to 8.x print the same report)."""

from __future__ import annotations

import pytest

from harness_memory import MemoryStore
from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract

TRY = """
* Try:
> Run with --stacktrace option to get the stack trace.
> Run with --info or --debug option to get more log output.
> Run with --scan to get full insights.

* Get more help at https://help.gradle.org

BUILD FAILED in 2s
1 actionable task: 1 executed
"""


def report(went_wrong: str, before: str = "> Task :app:compileJava\n") -> str:
    return f"{before}\nFAILURE: Build failed with an exception.\n\n* What went wrong:\n{went_wrong}\n{TRY}"


def test_an_exception_gradle_names_as_the_cause_is_the_failure():
    text = report("Execution failed for task ':app:compileJava'.\n> java.lang.OutOfMemoryError: Java heap space")
    ex = extract(text)
    assert ex.message == "java.lang.OutOfMemoryError: Java heap space"
    assert ex.exception == "OutOfMemoryError"
    lines = text.splitlines()
    assert ex.lines is not None and lines[ex.lines[0] - 1] == "> java.lang.OutOfMemoryError: Java heap space"
    assert categorize(ex) == "out_of_memory"


def test_the_same_exception_from_gradle_and_from_the_jvm_is_one_signature(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        gradle = store.error_signature(
            report("Execution failed for task ':app:test'.\n> java.lang.OutOfMemoryError: Java heap space")
        )
        jvm = store.error_signature(
            'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n'
            "\tat com.acme.Loader.read(Loader.java:41)\n"
        )
        assert gradle.id == jvm.id and gradle.category == "out_of_memory"


@pytest.mark.parametrize(
    "went_wrong",
    [
        "Execution failed for task ':app:compileJava'.\n"
        "> Could not resolve all files for configuration ':app:compileClasspath'.\n"
        "   > Could not find com.acme:lib:1.0.\n"
        "     Searched in the following locations:\n"
        "       - https://repo.maven.apache.org/maven2/com/acme/lib/1.0/lib-1.0.pom\n"
        "     Required by:\n"
        "         project :app",
        "Could not determine the dependencies of task ':app:test'.\n"
        "> Could not find org.example:util:2.3.1.\n"
        "  Required by:\n"
        "      project :app",
    ],
)
def test_a_dependency_gradle_could_not_find_is_a_missing_dependency(went_wrong):
    assert categorize(extract(report(went_wrong))) == "import_error"


def test_a_compiler_error_before_the_report_stays_the_failure():
    text = report(
        "Execution failed for task ':app:compileJava'.\n> Compilation failed; see the compiler error output for details.",
        before=(
            "> Task :app:compileJava FAILED\n"
            "/home/u/app/src/main/java/App.java:5: error: cannot find symbol\n"
            "        Foo x = new Foo();\n        ^\n  symbol:   class Foo\n  location: class App\n1 error\n"
        ),
    )
    ex = extract(text)
    assert ex.message.endswith("App.java:5: error: cannot find symbol")
    assert categorize(ex) == "compile_error"


def test_an_echoed_command_marked_like_a_cause_is_still_not_the_failure():
    # Jenkins echoes git's commands with the same marker: those lines are never the failure
    text = (
        " > git init /var/lib/jenkins/workspace/app # timeout=10\n"
        " > git fetch --tags --force --progress -- https://example.org/app.git # timeout=10\n"
        + report("Execution failed for task ':app:compileJava'.\n> java.lang.OutOfMemoryError: Metaspace")
    )
    ex = extract(text)
    assert ex.message == "java.lang.OutOfMemoryError: Metaspace"
    assert categorize(ex) == "out_of_memory"


@pytest.mark.parametrize("status", [":compileJava FAILED", "> Task :app:compileJava FAILED"])
def test_the_task_status_line_is_a_trailer_and_the_dependency_gradle_could_not_resolve_is_the_failure(status):
    # Gradle 4 prints the failed task as ':compileJava FAILED', later versions as '> Task :app:compileJava FAILED'
    text = report(
        "Could not resolve all files for configuration ':compileClasspath'.\n"
        "> Could not resolve com.fasterxml.jackson.core:jackson-databind:2.15.2.\n"
        "  Required by:\n      project :\n"
        "   > No cached version of com.fasterxml.jackson.core:jackson-databind:2.15.2 available for offline mode.",
        before=f"+ gradle --offline build\n{status}\n",
    )
    ex = extract(text)
    assert "Could not resolve" in ex.message
    assert categorize(ex) == "import_error"
