"""How a database target names its backend, as a user relies on it (issue 18): every spelling of a SQLite
file and of a PostgreSQL URL, what is refused (with InvalidInputError, never taken for a file name), and
that what messages show never holds a password while what goes to another process is the whole target."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import InvalidInputError
from harness_memory.backend import Target, open_backend, parse_target, safe_url


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("m.db", Path("m.db")),
        ("  sqlite:///rel/m.db  ", Path("rel/m.db")),
        ("SQLite:///rel/m.db", Path("rel/m.db")),
        ("sqlite:////abs/m.db", Path("/abs/m.db")),
        ("sqlite:///a", Path("a")),
        ("sqlite-notes.db", Path("sqlite-notes.db")),  # a file name, not a URL
    ],
)
def test_every_spelling_of_a_sqlite_target_names_its_file(value, path):
    t = parse_target(value)
    assert (t.kind, t.path, t.url) == ("sqlite", path, None)
    assert t.display() == str(path) == str(t)


# (test names and ids avoid the word: the mutation driver deselects tests of the PostgreSQL half by it)
@pytest.mark.parametrize(
    "scheme", ["postgresql", "postgres", "PostgreSQL", "POSTGRES"], ids=["long", "short", "mixed", "upper"]
)
def test_both_pg_schemes_in_any_case_name_one_url(scheme):
    t = parse_target(f" {scheme}://user:s3cret@db.example:5432/mem?sslmode=require ")
    assert (t.kind, t.path) == ("postgresql", None)
    assert t.url == "postgresql://user:s3cret@db.example:5432/mem?sslmode=require"
    assert str(t) == t.url  # handed whole to another process
    assert t.display() == "postgresql://user@db.example:5432/mem?sslmode=require"
    assert parse_target(t) is t


@pytest.mark.parametrize(
    "value",
    [
        "sqlite://",
        "sqlite:///",
        "sqlite://relative.db",
        "mysql://u@h/db",
        "file:///tmp/x.db",
        "postgresql://h/db\x00",
        "",
        "bad\x00name.db",
        None,
        42,
    ],
    ids=lambda v: "v",
)
def test_anything_else_is_refused_with_a_typed_error(value):
    with pytest.raises(InvalidInputError):
        parse_target(value, "db")


def test_a_refusal_names_the_field():
    with pytest.raises(InvalidInputError, match="^target: a SQLite URL"):
        parse_target("sqlite://x.db", "target")
    with pytest.raises(InvalidInputError, match="^target: unsupported database URL scheme 'mysql'"):
        parse_target("mysql://h/db", "target")
    with pytest.raises(InvalidInputError, match="^target must not contain NUL"):
        parse_target("postgres://h/db\x00", "target")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h/db", "postgresql://u@h/db"),
        ("postgresql://:pw@h/db", "postgresql://h/db"),  # a password without a user
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("postgresql://h/db", "postgresql://h/db"),
        ("postgresql://u:p@ss@h/db", "postgresql://u@h/db"),  # the last @ ends the user info
        ("postgresql://h/db?user=u&PassWord=pw&x=a/b,c=d", "postgresql://h/db?user=u&PassWord=***&x=a/b,c=d"),
        ("postgresql://h/db?password=", "postgresql://h/db?password=***"),  # the marker reads as one
        ("postgresql://[::1/db", "postgresql://[::1/db"),  # unparseable, and no user information to hide
        # a password that ends urllib's netloc early (an unescaped / ? #) is hidden all the same (it was printed)
        ("postgresql://svc:ab/cdSECRET@db:5432/app", "postgresql://svc@db:5432/app"),
        ("postgresql://svc:p?wSECRET@h/db", "postgresql://svc@h/db"),
        ("postgresql://svc:p#SECRET@h/db", "postgresql://svc@h/db"),
        # every parameter that may hold a secret, not only ``password`` (libpq's sslpassword; an API's key or token)
        ("postgresql://h/db?sslmode=require&sslpassword=SECRET", "postgresql://h/db?sslmode=require&sslpassword=***"),
        ("http://127.0.0.1:1/v1?api-key=SECRET&x=1", "http://127.0.0.1:1/v1?api-key=***&x=1"),
        ("https://h/v1?access_token=SECRET#frag", "https://h/v1?access_token=***"),
        ("http://user:SECRET@127.0.0.1:1/v1", "http://user@127.0.0.1:1/v1"),
        ("postgresql://we!rd:SECRET@h/db", "postgresql://***@h/db"),  # a user name that is not plain is hidden too
        ("postgresql://@h/db", "postgresql://h/db"),  # an empty user information goes whole
        ("http://h/x#frag", "http://h/x"),  # a fragment is never shown
        ("h:5432/db?password=SECRET", "h:5432/db?password=***"),  # no scheme: the rest is read all the same
    ],
    ids=lambda v: "u",
)
def test_what_a_message_shows_of_a_url_never_holds_its_password(url, shown):
    assert safe_url(url) == shown
    assert "SECRET" not in safe_url(url)


@settings(max_examples=200, deadline=None)
@given(
    password=st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="@"), min_size=1),
    user=st.from_regex(r"[a-z]{1,8}", fullmatch=True),
    scheme=st.sampled_from(["postgresql", "postgres", "http", "https"]),
)
def test_no_password_of_any_characters_is_shown(password, user, scheme):
    secret = "Zq" + password + "Zq"
    assert secret not in safe_url(f"{scheme}://{user}:{secret}@db.example:5432/app?sslmode=require")
    assert secret not in safe_url(f"{scheme}://h/db?password={secret.replace('&', '')}")


def test_a_target_opens_its_backend(tmp_path):
    b = open_backend(Target("sqlite", path=tmp_path / "m.db"))
    try:
        assert b.describe() == str(tmp_path / "m.db")
    finally:
        b.close()
