"""The window the signer reads is bounded in lines as well as characters (issue 8: a 50 MiB log
signs in under 2 s whatever its lines look like)."""

from __future__ import annotations

import harness_memory.failure_excerpt as fe

GCC = "gcc -c src/main.c\nsrc/main.c:14:5: error: unknown type name 'cfg_t'\n   14 |     cfg_t c;\n"


def _read_lines(text: str) -> tuple[int, fe.Excerpt]:
    seen: list[int] = []
    real = fe.clean_lines

    def counting(window, first_no=1):
        seen.append(window.count("\n") + 1)
        return real(window, first_no)

    fe.clean_lines = counting
    try:
        ex = fe.extract(text)
    finally:
        fe.clean_lines = real
    return max(seen), ex


def test_a_log_of_very_short_lines_is_read_up_to_the_line_bound():
    lines, ex = _read_lines("x\n" * (3 * fe.WINDOW_LINES) + GCC)
    assert lines <= fe.WINDOW_LINES + 1
    assert "unknown type name 'cfg_t'" in ex.message
    start = 3 * fe.WINDOW_LINES + 2  # line numbers stay those of the whole input
    assert ex.lines is not None and ex.lines[0] == start


def test_a_log_within_the_line_bound_is_read_whole():
    text = "ok\n" * (fe.WINDOW_LINES // 2) + GCC
    lines, ex = _read_lines(text)
    assert lines == text.count("\n") + 1
    assert "unknown type name 'cfg_t'" in ex.message


def test_the_character_bound_still_holds_for_long_lines():
    lines, ex = _read_lines(("y" * 200 + "\n") * (2 * fe.WINDOW_CHARS // 200) + GCC)
    assert lines <= fe.WINDOW_CHARS // 200 + 2
    assert "unknown type name 'cfg_t'" in ex.message
