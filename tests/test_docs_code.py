"""Every ``python`` code block of README.md and docs/ runs as written.

Pages are discovered (every ``*.md`` under docs/, and README.md); the blocks of one page run
in order in one namespace (a page's blocks build on each other), in a fresh process whose
working directory and data folder are temporary. A block fenced as ``python`` is a promise
that it runs; an excerpt that cannot (a protocol's signature, a server URL) belongs in a
``text`` or ``pycon`` fence.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)

RUNNER = r"""
import json, sys, traceback
blocks = json.loads(sys.stdin.read())
ns = {"__name__": "__docs__"}
for k, (line, code) in enumerate(blocks, 1):
    try:
        exec(compile(code, f"block {k} (line {line})", "exec"), ns)
    except BaseException:
        sys.stderr.write(f"@@FAILED block {k} of {len(blocks)}, starting at line {line}\n")
        sys.stderr.write(traceback.format_exc(limit=-3))
        sys.exit(1)
"""


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[tuple[int, str]]:
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


def test_the_pages_are_found():
    found = {p.relative_to(ROOT).as_posix() for p in pages()}
    assert {"README.md", "docs/quickstart.md", "docs/integration.md", "docs/maintenance.md"} <= found
    assert blocks(ROOT / "README.md"), "README.md has a python example"


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_python_blocks_run_as_written(page, tmp_path):
    code = blocks(page)
    if not code:
        return  # nothing to run on this page
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_MEMORY_")}
    env.update(HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"), PYTHONPATH=str(ROOT))
    p = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(code),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
        check=False,
    )
    rel = page.relative_to(ROOT).as_posix()
    if p.returncode != 0:
        where = next(
            (line[len("@@FAILED ") :] for line in p.stderr.splitlines() if line.startswith("@@FAILED")),
            "before its first block",
        )
        detail = p.stderr.split("\n", 1)[1] if "@@FAILED" in p.stderr else p.stderr
        pytest.fail(f"{rel}: python {where} does not run as written:\n{detail[-3000:]}", pytrace=False)
