"""Classes met in the heldout22 split of the CI-log corpus (its first run: tests/fixtures/ci_logs/README.md, "The
`heldout22` split"), each written as a general rule (error_signatures' words) and tested on inputs of other tools and
words than the split's logs, with neighbours that keep their category; the split's logs are in tests/test_ci_corpus.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract


def category(text: str) -> str:
    return categorize(extract(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        # a transfer aborted for going too slowly for too long
        ("curl: (28) Operation too slow. Less than 100 bytes/sec transferred the last 30 seconds", "timeout"),
        (
            "error: RPC failed; curl 28 Operation too slow. Less than 1000 bytes/sec transferred the last 10 seconds",
            "timeout",
        ),
        # a tool's own limit of memory reached
        ("xz: 129 MiB of memory is required. The limit is 64 MiB.", "out_of_memory"),
        ("xz: archive.tar.xz: Memory usage limit reached", "out_of_memory"),
        # a permission of the user that is not enough
        ("fatal: insufficient permission for adding an object to repository database ./objects", "permission"),
        ("ERROR: Insufficient permissions to write to /var/cache/app", "permission"),
        # a library or a package a program needs that is not installed
        (
            "-- Checking for module 'libzmq>=4.3'\n--   Package 'libzmq', required by 'virtual:world', not found",
            "import_error",
        ),
        ("Package 'gtk+-3.0' not found", "import_error"),
        (
            "/usr/bin/app: error while loading shared libraries: libssl.so.3: cannot open shared object file: "
            "No such file or directory",
            "import_error",
        ),
        ("./bin/app: error while loading shared libraries: libfoo.so.2: wrong ELF class: ELFCLASS32", "import_error"),
        # two values compared that cannot be (Lua's words)
        ("lua: sort.lua:4: attempt to compare number with nil", "type_error"),
        ("lua5.4: x.lua:2: attempt to compare two table values", "type_error"),
        ("input:3: attempt to compare string with number", "type_error"),
        # a key that is not there
        ("gpg: Can't check signature: No public key", "not_found"),
        ("gpg: signing failed: No secret key", "not_found"),
        # a test's expectation that the code raise or warn, not met
        ("E       Failed: DID NOT RAISE <class 'KeyError'>", "assertion"),
        ("E       Failed: DID NOT WARN. No warnings of type (<class 'UserWarning'>,) were emitted.", "assertion"),
    ],
)
def test_heldout22_classes_in_other_words(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # neighbours that keep their category
        ("curl: (28) Operation timed out after 5001 milliseconds with 0 bytes received", "timeout"),
        ("MemoryError: Unable to allocate 3.2 GiB for an array", "out_of_memory"),
        ("PermissionError: [Errno 13] Permission denied: '/etc/app.conf'", "permission"),
        ("ModuleNotFoundError: No module named 'yaml'", "import_error"),
        ("lua: x.lua:1: attempt to index a nil value (global 'cfg')", "type_error"),
        ("FileNotFoundError: [Errno 2] No such file or directory: 'keys.txt'", "not_found"),
        ("AssertionError: assert 1 == 2", "assertion"),
    ],
)
def test_neighbours_keep_their_category(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, not_this",
    [
        ("error: the key was public but the signature did not verify", "not_found"),
        ("error: the upload was too slow for the user's patience", "timeout"),
        ("error: the package 'x' was found but is broken", "import_error"),
        ("error: attempt to compare the two reports failed", "type_error"),
    ],
)
def test_words_near_the_new_ones_do_not_take_their_category(text, not_this):
    assert category(text) != not_this


@settings(max_examples=60, deadline=None)
@given(
    name=st.from_regex(r"[a-z][a-z0-9+._-]{0,20}", fullmatch=True),
    by=st.sampled_from(["", ", required by 'virtual:world',", " required by 'app'"]),
)
def test_a_pkg_config_package_not_found_is_an_import_error_whatever_its_name(name, by):
    assert category(f"--   Package '{name}'{by} not found") == "import_error"
